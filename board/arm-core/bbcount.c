/* bbcount: a QEMU TCG plugin (linux-user, plugin API 1, QEMU 7.2) that counts how often each
 * translated block runs inside marked windows, and records its instruction bytes, so that
 * scripts/arm-bench can cost every hot block with llvm-mca. Only the windows count:
 * the model's set-up, file reading and the Python interpreter's start are not the inference.
 *
 * A window opens and closes at each marker; two kinds, so that neither engine needs a change:
 *   mark=ADDR,entry=ENT the instruction at link-time address ADDR of a static-pie binary whose ELF entry
 *                       is ENT (armcore: clock_gettime, which its driver calls just before and just
 *                       after engine.run());
 *   sys=NR              the system call NR with first argument 0xFACE (the LiteRT script calls it
 *                       through ctypes around interpreter.invoke(); the kernel answers ENOSYS).
 * out=FILE: "# windows W start_code S entry_code E" then one line per block that ran in a window:
 *   "<vaddr hex> <instructions> <executions> <instruction bytes hex>".
 * Counting is an inline add per block (fast); at each marker every block's counter is
 * snapshotted, so a window's count is the difference. Blocks are keyed on (vaddr, length):
 * QEMU may translate the same code again. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

typedef struct {
    uint64_t vaddr, count, snap, acc;
    size_t n, nbytes;
    unsigned char *bytes;
} Block;

/* Open addressing on (vaddr, length); no GLib headers needed (plugins need only libc). */
static Block **table;
static size_t cap = 1 << 16, used;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t mark_pc, mark_off, entry_off;
static int64_t mark_sys = -1;
static int open_window, windows;
static const char *out_path = "bbcount.txt";

static void toggle(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < cap; i++) {
        Block *b = table[i];
        if (!b) continue;
        if (open_window) b->acc += b->count - b->snap; else b->snap = b->count;
    }
    if (open_window) windows++;
    open_window = !open_window;
    pthread_mutex_unlock(&lock);
}

static size_t slot(uint64_t va, size_t n)
{
    size_t h = (size_t)((va >> 2) * 0x9E3779B97F4A7C15ull ^ n) & (cap - 1);
    while (table[h] && !(table[h]->vaddr == va && table[h]->n == n)) h = (h + 1) & (cap - 1);
    return h;
}

/* Grows before half full; Block records never move, so the inline counters stay valid. */
static void grow(void)
{
    Block **old = table;
    size_t oc = cap;
    cap *= 2;
    table = calloc(cap, sizeof *table);
    for (size_t i = 0; i < oc; i++)
        if (old[i]) table[slot(old[i]->vaddr, old[i]->n)] = old[i];
    free(old);
}

static void on_mark(unsigned int vcpu, void *u) { toggle(); }

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
                       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                       uint64_t a7, uint64_t a8)
{
    if (num == mark_sys && a1 == 0xFACE) toggle();
}

static void on_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb), i, len = 0;
    uint64_t va = qemu_plugin_tb_vaddr(tb);
    for (i = 0; i < n; i++) len += qemu_plugin_insn_size(qemu_plugin_tb_get_insn(tb, i));
    pthread_mutex_lock(&lock);
    /* The binary is position-independent: its load bias is where QEMU put the entry point
     * (known once the guest runs, not yet when the plugin is installed). */
    if (mark_off && !mark_pc) mark_pc = qemu_plugin_entry_code() - entry_off + mark_off;
    size_t h = slot(va, n);
    Block *b = table[h];
    if (!b) {
        b = calloc(1, sizeof *b);
        b->vaddr = va; b->n = n; b->nbytes = len; b->bytes = malloc(len);
        size_t o = 0;
        for (i = 0; i < n; i++) {
            struct qemu_plugin_insn *in = qemu_plugin_tb_get_insn(tb, i);
            memcpy(b->bytes + o, qemu_plugin_insn_data(in), qemu_plugin_insn_size(in));
            o += qemu_plugin_insn_size(in);
        }
        /* A block first seen inside a window counts from zero (snap = 0). */
        table[h] = b;
        if (++used * 2 > cap) grow();
    }
    pthread_mutex_unlock(&lock);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->count, 1);
    if (mark_pc)
        for (i = 0; i < n; i++) {
            struct qemu_plugin_insn *in = qemu_plugin_tb_get_insn(tb, i);
            if (qemu_plugin_insn_vaddr(in) == mark_pc)
                qemu_plugin_register_vcpu_insn_exec_cb(in, on_mark, QEMU_PLUGIN_CB_NO_REGS, NULL);
        }
}

static void at_exit(qemu_plugin_id_t id, void *u)
{
    FILE *f = fopen(out_path, "w");
    if (!f) { qemu_plugin_outs("bbcount: cannot write the output file\n"); return; }
    if (open_window) toggle();   /* a window left open ends at exit */
    fprintf(f, "# windows %d start_code 0x%" PRIx64 " entry_code 0x%" PRIx64 "\n", windows,
            qemu_plugin_start_code(), qemu_plugin_entry_code());
    for (size_t j = 0; j < cap; j++) {
        Block *b = table[j];
        if (!b || !b->acc) continue;
        fprintf(f, "%" PRIx64 " %zu %" PRIu64 " ", b->vaddr, b->n, b->acc);
        for (size_t i = 0; i < b->nbytes; i++) fprintf(f, "%02x", b->bytes[i]);
        fputc('\n', f);
    }
    fclose(f);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        char *v = strchr(argv[i], '=');
        if (!v) return -1;
        *v++ = 0;
        if (!strcmp(argv[i], "out")) out_path = strdup(v);
        else if (!strcmp(argv[i], "mark")) mark_off = strtoull(v, NULL, 0);
        else if (!strcmp(argv[i], "entry")) entry_off = strtoull(v, NULL, 0);
        else if (!strcmp(argv[i], "sys")) mark_sys = strtoll(v, NULL, 0);
        else return -1;
    }
    table = calloc(cap, sizeof *table);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_trans);
    if (mark_sys >= 0) qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
