// The program of the layer link check (tests/cmake/layer_link.cmake): it
// calls nothing; the link itself is the check.
int main() { return 0; }
