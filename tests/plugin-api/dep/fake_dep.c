/* The dependency of fake_missing_dep.c. */
__attribute__((visibility("default"))) int fake_dep_value(void);
int fake_dep_value(void) {
    return 77;
}
