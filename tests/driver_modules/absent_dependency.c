/* A library the needs_absent_library test module links and the loader never finds: it is built
 * into a directory on no search path. */
int hal_test_absent_dependency(void);
int hal_test_absent_dependency(void) {
  return 1;
}
