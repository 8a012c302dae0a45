// Stands in for a vendor runtime (built as libOpenCL.so) so the linkage check can be tested.
extern "C" int dlrt_fake_vendor_symbol(void) { return 42; }
