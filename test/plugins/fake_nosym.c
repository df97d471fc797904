/* fake_nosym.c - a shared library that is not an xrt plugin: it lacks
 * the entry symbol. */
int fake_nosym_answer(void);
int fake_nosym_answer(void) { return 42; }
