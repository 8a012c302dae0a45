#include <cstdio>
int main() { std::puts("dlrt: under construction"); return 0; }
