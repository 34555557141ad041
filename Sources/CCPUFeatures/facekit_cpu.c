// sched_getaffinity, sched_setaffinity, sched_getcpu and CPU_COUNT are GNU extensions.
#define _GNU_SOURCE
#include "facekit_cpu.h"

#if defined(__x86_64__)
#include <cpuid.h>

int facekit_cpu_x86_64_v3(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    // Leaf 1, ECX: SSE3, SSSE3, FMA, CX16, SSE4.1, SSE4.2, MOVBE, POPCNT, XSAVE, OSXSAVE, AVX, F16C.
    const unsigned leaf1 = 1u << 0 | 1u << 9 | 1u << 12 | 1u << 13 | 1u << 19 | 1u << 20 | 1u << 22 | 1u << 23
                         | 1u << 26 | 1u << 27 | 1u << 28 | 1u << 29;
    if ((c & leaf1) != leaf1) return 0;
    // XCR0 bits 1 and 2: the OS saves the SSE and AVX register state (AVX is unusable otherwise).
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    if ((lo & 6) != 6) return 0;
    // Leaf 7, EBX: BMI1, AVX2, BMI2.
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    const unsigned leaf7 = 1u << 3 | 1u << 5 | 1u << 8;
    if ((b & leaf7) != leaf7) return 0;
    // Leaf 0x80000001, ECX: LAHF/SAHF, LZCNT.
    if (!__get_cpuid(0x80000001, &a, &b, &c, &d)) return 0;
    return (c & (1u << 0)) && (c & (1u << 5));
}

int facekit_cpu_x86_64_v4_vnni(void) {
    if (!facekit_cpu_x86_64_v3()) return 0;
    // XCR0 bits 5, 6 and 7: the OS saves the opmask registers and both halves of ZMM0-31.
    unsigned lo, hi, a, b, c, d;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    if ((lo & 0xe6) != 0xe6) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    // Leaf 7, EBX: AVX512F (16), AVX512DQ (17), AVX512CD (28), AVX512BW (30), AVX512VL (31);
    // ECX: AVX512_VNNI (11).
    const unsigned v4 = 1u << 16 | 1u << 17 | 1u << 28 | 1u << 30 | 1u << 31;
    return (b & v4) == v4 && (c & (1u << 11)) != 0;
}
#else
int facekit_cpu_x86_64_v3(void) { return 0; }
int facekit_cpu_x86_64_v4_vnni(void) { return 0; }
#endif

#if defined(__aarch64__)
#include <sys/auxv.h>

int facekit_cpu_aarch64_dotprod(void) {
    // HWCAP_ASIMDDP (asm/hwcap.h), spelled out: older C libraries' headers lack the name.
    return (getauxval(AT_HWCAP) & (1ul << 20)) != 0;
}
#else
int facekit_cpu_aarch64_dotprod(void) { return 0; }
#endif

#include <unistd.h>
#include <sys/syscall.h>

void facekit_cost_window_marker(void) { syscall(4081, 0xFACE); }

#include <sched.h>

int facekit_cpu_pin_current(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    int cpu = sched_getcpu();
    if (cpu < 0) return -1;
    if (CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set)) return cpu;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 ? cpu : -1;
}
