// A shared library named like a plugin that exports something, just not the entry point.
extern "C" __attribute__((visibility("default"))) int cocktail_plugin_entry_v0(void) {
  return 0;
}
