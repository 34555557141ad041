#include "facekit_process_arguments.h"
#include <stddef.h>

static int saved_argc;
static char *const *saved_argv;

// glibc calls .init_array functions as f(argc, argv, envp), before main.
__attribute__((constructor)) static void facekit_capture_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    if (argc > 0 && argv != NULL) {
        saved_argc = argc;
        saved_argv = argv;
    }
}

char *const *facekit_process_arguments(int *argc) {
    *argc = saved_argc;
    return saved_argv;
}
