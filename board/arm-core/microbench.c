/* Microbenchmarks with known throughput, to validate scripts/arm-bench's cost model:
 * each loop runs ITER times between two marker system calls (bbcount's sys= marker), and the
 * model's cycles per iteration are compared with Arm's software optimization guides (Cortex-A72
 * SOG, UAN 0016A; Cortex-A76 SOG, PJDOC-466751330-7215):
 *   sdot   16 independent SDOT .4s         A76: 2 per cycle (V0, V1)             ->  8 cycles/iteration
 *   fmla   16 independent FMLA .4s         A76: 2 per cycle; A72: Q-form 1 per cycle (F0+F1)
 *                                                                               ->  8 / 16
 *   smlal  16 independent SMLAL .4s        A76: 1 per cycle (V0); A72: 1 (one pipe) -> 16 / 16
 *   chain  16 dependent FADD .4s           A76 latency 2, A72 latency 4          -> 32 / 64
 *   ichain 16 dependent ADD .4s (integer)  A76 latency 2, A72 latency 3          -> 32 / 48
 * (16 accumulators: enough to hide every latency involved, so the first three are throughput bound.)
 * Built with aarch64-linux-gnu-gcc -O2 -static -march=armv8.2-a+dotprod; run under qemu-aarch64. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#define ITER 10000
#define MARK() syscall(4081, 0xFACE)

#define R16(m) m(0) m(1) m(2) m(3) m(4) m(5) m(6) m(7) m(8) m(9) m(10) m(11) m(12) m(13) m(14) m(15)
#define SDOT(i) "sdot v" #i ".4s, v16.16b, v17.16b\n"
#define FMLA(i) "fmla v" #i ".4s, v16.4s, v17.4s\n"
#define SMLAL(i) "smlal v" #i ".4s, v16.4h, v17.4h\n"
#define FADD(i) "fadd v0.4s, v0.4s, v1.4s\n"
#define IADD(i) "add v0.4s, v0.4s, v1.4s\n"
#define CLOBBER "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "cc"
#define LOOP(body) do { long n = ITER; \
    __asm__ volatile("1:\n" body "subs %0, %0, #1\nb.ne 1b\n" : "+r"(n) : : CLOBBER); } while (0)

int main(int argc, char **argv)
{
    const char *k = argc > 1 ? argv[1] : "";
    MARK();
    if (!strcmp(k, "sdot")) LOOP(R16(SDOT));
    else if (!strcmp(k, "fmla")) LOOP(R16(FMLA));
    else if (!strcmp(k, "smlal")) LOOP(R16(SMLAL));
    else if (!strcmp(k, "chain")) LOOP(R16(FADD));
    else if (!strcmp(k, "ichain")) LOOP(R16(IADD));
    else { MARK(); fprintf(stderr, "usage: microbench sdot|fmla|smlal|chain|ichain\n"); return 2; }
    MARK();
    printf("%s: %d iterations\n", k, ITER);
    return 0;
}
