/* insn_count: a QEMU TCG plugin that counts executed guest instructions exactly and
 * records the count at each profiling marker the firmware executes.
 *
 * Why carried here: QEMU 7.2 accepts -plugin, but Debian ships no plugins and no
 * qemu-plugin.h. The few API functions used are declared below, matching the 7.2 ABI
 * (include/qemu/qemu-plugin.h, QEMU_PLUGIN_VERSION 1).
 *
 * Marker: on Arm (qemu-system-arm) the 16-bit Thumb hint 0xBF70 ("hint #7": an unallocated
 * hint, executed as a NOP by every Armv6-M..Armv8.1-M core and by QEMU); on AArch64
 * (qemu-aarch64) the A64 hint 0xD5032FFF ("hint #127", unallocated, a NOP likewise). The
 * guest's architecture (QEMU's target name) picks which. Each time one executes, the plugin
 * writes the number of instructions executed so far (the marker included) as one decimal line
 * to the file given by `out=PATH`; at exit it writes `total N`.
 *
 * Exactness: every translation block adds its instruction count to the counter when it
 * starts; a marker's callback subtracts the instructions of its block that come after it.
 * Blocks only end early on exceptions, and the firmware takes none between markers.
 *
 * Build: gcc -shared -fPIC -O2 -o insn_count.so insn_count.c
 * Use:   qemu-system-arm ... -plugin ./insn_count.so,out=marks.txt
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

/* ---- the part of the QEMU 7.2 plugin API this plugin uses ---- */
typedef uint64_t qemu_plugin_id_t;

typedef struct qemu_info_t {
    const char *target_name;
    struct {
        int min;
        int cur;
    } version;
    bool system_emulation;
    union {
        struct {
            int smp_vcpus;
            int max_vcpus;
        } system;
    };
} qemu_info_t;

struct qemu_plugin_tb;
struct qemu_plugin_insn;

enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;
QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv);

/* ---- the counter ---- */
static uint64_t executed;  /* instructions executed so far (single vCPU) */
static FILE *out;

static const unsigned char THUMB_MARKER[2] = {0x70, 0xbf};          /* 0xBF70, little-endian */
static const unsigned char A64_MARKER[4] = {0xff, 0x2f, 0x03, 0xd5};  /* 0xD5032FFF, little-endian */
static const unsigned char *marker = THUMB_MARKER;
static size_t marker_size = sizeof(THUMB_MARKER);

static void on_marker(unsigned int vcpu_index, void *after)
{
    (void)vcpu_index;
    fprintf(out, "%" PRIu64 "\n", executed - (uint64_t)(uintptr_t)after);
    fflush(out);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
    size_t i;
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &executed, (uint64_t)n);
    for (i = 0; i < n; ++i) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        /* Thumb: only the first halfword is compared: QEMU 7.2 appends to an instruction's
         * data the halfword it peeks at near a page end (to see whether the next instruction
         * crosses it), so a 16-bit instruction can report 4 bytes. No 32-bit Thumb instruction
         * starts with 0xBF70 (their first halfword is 0xE800 or above). A64 instructions are
         * all 4 bytes. */
        if (qemu_plugin_insn_size(insn) >= marker_size &&
            memcmp(qemu_plugin_insn_data(insn), marker, marker_size) == 0) {
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker, QEMU_PLUGIN_CB_NO_REGS,
                                                   (void *)(uintptr_t)(n - i - 1));
        }
    }
}

static void on_exit_cb(qemu_plugin_id_t id, void *userdata)
{
    (void)id;
    (void)userdata;
    fprintf(out, "total %" PRIu64 "\n", executed);
    fflush(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv)
{
    int k;
    out = stderr;
    if (info != NULL && info->target_name != NULL && strcmp(info->target_name, "aarch64") == 0) {
        marker = A64_MARKER;
        marker_size = sizeof(A64_MARKER);
    }
    for (k = 0; k < argc; ++k) {
        if (strncmp(argv[k], "out=", 4) == 0) {
            out = fopen(argv[k] + 4, "w");
            if (out == NULL) {
                fprintf(stderr, "insn_count: cannot open %s\n", argv[k] + 4);
                return 1;
            }
        } else {
            fprintf(stderr, "insn_count: unknown argument %s\n", argv[k]);
            return 1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
    return 0;
}
