/* A shared library that exports a symbol outside the hal_ namespace: the export check must
 * refuse it (see CMakeLists.txt). */
int not_a_hal_symbol(int x);
int not_a_hal_symbol(int x) {
  return x + 1;
}
