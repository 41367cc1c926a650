/* A stand-in for libcuda that exports only cuInit: the plugin must refuse it by naming the
 * driver functions it lacks, and never call anything it resolved. */
__attribute__((visibility("default"))) int cuInit(unsigned int flags) {
    (void)flags;
    return 0;
}
