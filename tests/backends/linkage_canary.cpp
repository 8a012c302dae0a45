// A library that links a fake vendor runtime: the linkage check must reject it.
extern "C" int dlrt_fake_vendor_symbol(void);
extern "C" int dlrt_linkage_canary(void) { return dlrt_fake_vendor_symbol(); }
