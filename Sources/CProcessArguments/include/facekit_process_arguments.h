// CProcessArguments: the process's argv, as the C runtime hands it over.
//
// Why this shim exists: Swift's CommandLine.arguments on Linux has no argv of its own; its
// runtime finds the stack region in /proc/self/maps and walks back from `environ` to argc. Under
// qemu-user that walk can miss (seen with a nested qemu-x86_64: about one run in five started
// with no arguments at all, so `facekit model run …` printed the help and exited 64). glibc
// passes argc and argv to every ELF constructor, which is exact wherever the program runs.
#pragma once

/// The argv glibc passed to the program's constructors and their count in *argc; NULL with
/// *argc = 0 if no constructor received them (another C library).
char *const *facekit_process_arguments(int *argc);
