/* A/B weight slots with rollback, for a model built with `kiln build --weights blob`.
 *
 * The device keeps the code image (ota_model.c, from release 1) and two weight slots, A and B,
 * in flash (here: arrays in RAM, each at a 16-byte boundary). An update is written into the
 * slot not in use and checked there; only a blob that passes every check becomes the weights
 * in use, otherwise the device keeps running on the slot it had. At boot the slot named by
 * the boot record is tried first and the other one if it fails: a slot damaged in flash rolls
 * back to the previous weights.
 *
 * Usage: ota_ab V1.weights.bin V2.weights.bin OTHER.weights.bin (OTHER: another model's blob).
 * Prints each step; exit status 0 when every step ended as expected. */
#include <stdio.h>
#include <string.h>
#include "ota_model.h"

#define SLOT_SIZE ((OTA_MODEL_BLOB_SIZE + 15u) / 16u * 16u)
#define SLOT_A 0
#define SLOT_B 1

static unsigned char flash_raw[2u * SLOT_SIZE + 16u];
static size_t slot_bytes[2];
static int active = -1;  /* slot whose weights are in use */
static int boot_record;  /* slot to try first at boot */
static int failures;

static unsigned char *slot(int k)
{
    unsigned char *base = flash_raw + (16u - (uintptr_t)flash_raw % 16u) % 16u;
    return base + (size_t)k * SLOT_SIZE;
}

static const char *slot_name(int k)
{
    return k == SLOT_A ? "A" : "B";
}

static const char *status_name(int code)
{
    switch (code) {
    case OTA_MODEL_OK: return "ok";
    case OTA_MODEL_ERR_NO_WEIGHTS: return "ERR_NO_WEIGHTS";
    case OTA_MODEL_ERR_BLOB_TRUNCATED: return "ERR_BLOB_TRUNCATED";
    case OTA_MODEL_ERR_BLOB_ALIGN: return "ERR_BLOB_ALIGN";
    case OTA_MODEL_ERR_BLOB_MAGIC: return "ERR_BLOB_MAGIC";
    case OTA_MODEL_ERR_BLOB_VERSION: return "ERR_BLOB_VERSION";
    case OTA_MODEL_ERR_BLOB_MODEL: return "ERR_BLOB_MODEL";
    case OTA_MODEL_ERR_BLOB_ABI: return "ERR_BLOB_ABI";
    case OTA_MODEL_ERR_BLOB_SIZE: return "ERR_BLOB_SIZE";
    case OTA_MODEL_ERR_BLOB_CRC: return "ERR_BLOB_CRC";
    case OTA_MODEL_ERR_BLOB_RESERVED: return "ERR_BLOB_RESERVED";
    case OTA_MODEL_ERR_BLOB_DIGEST: return "ERR_BLOB_DIGEST";
    case OTA_MODEL_ERR_BLOB_SIGNATURE: return "ERR_BLOB_SIGNATURE";
    case OTA_MODEL_ERR_BLOB_UNSIGNED: return "ERR_BLOB_UNSIGNED";
    default: return "unknown";
    }
}

static void expect(int got, int want, const char *what)
{
    if (got != want) {
        printf("  UNEXPECTED: %s gave %s, expected %s\n", what, status_name(got), status_name(want));
        ++failures;
    }
}

static size_t read_file(const char *path, unsigned char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n;
    if (f == NULL) {
        printf("cannot open %s\n", path);
        return 0;
    }
    n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

/* Erase a slot (flash reads 0xFF) and program `n` bytes into it. */
static void program_slot(int k, const unsigned char *data, size_t n)
{
    memset(slot(k), 0xFF, SLOT_SIZE);
    memcpy(slot(k), data, n);
    slot_bytes[k] = n;
}

/* Run the model on a fixed input; the index of the most likely class, or -1. */
static int classify(void)
{
    static const float x[OTA_MODEL_INPUT_0_ELEMENTS] = { 0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 1.5f, 0.0f, -2.0f };
    float probs[OTA_MODEL_OUTPUT_0_ELEMENTS];
    int status = ota_model_run(x, probs);
    int best = 0;
    int k;
    if (status != OTA_MODEL_OK) {
        printf("  inference: %s\n", status_name(status));
        return -1;
    }
    for (k = 1; k < (int)OTA_MODEL_OUTPUT_0_ELEMENTS; ++k) {
        best = probs[k] > probs[best] ? k : best;
    }
    printf("  inference on slot %s: class %d, p = %.4f %.4f %.4f %.4f\n", slot_name(active), best,
           (double)probs[0], (double)probs[1], (double)probs[2], (double)probs[3]);
    return best;
}

/* Boot: the slot of the boot record, else the other one (rollback). */
static void boot(void)
{
    int order[2];
    int i;
    order[0] = boot_record;
    order[1] = 1 - boot_record;
    for (i = 0; i < 2; ++i) {
        int status = ota_model_load_weights(slot(order[i]), slot_bytes[order[i]]);
        printf("  boot: slot %s -> %s\n", slot_name(order[i]), status_name(status));
        if (status == OTA_MODEL_OK) {
            active = boot_record = order[i];
            return;
        }
    }
}

/* An update: programmed into the slot not in use, checked there, switched to only if sound. */
static int update(const unsigned char *image, size_t n)
{
    int target = 1 - active;
    int status;
    program_slot(target, image, n);
    status = ota_model_check_weights(slot(target), slot_bytes[target]);
    if (status != OTA_MODEL_OK) {
        printf("  update into slot %s refused: %s; slot %s stays in use\n", slot_name(target),
               status_name(status), slot_name(active));
        return status;
    }
    status = ota_model_load_weights(slot(target), slot_bytes[target]);
    if (status == OTA_MODEL_OK) {
        printf("  update into slot %s accepted: switched from slot %s\n", slot_name(target), slot_name(active));
        active = boot_record = target;
    }
    return status;
}

int main(int argc, char **argv)
{
    static unsigned char v1[SLOT_SIZE];
    static unsigned char v2[SLOT_SIZE];
    static unsigned char damaged[SLOT_SIZE];
    static unsigned char other[SLOT_SIZE];
    size_t n1;
    size_t n2;
    size_t n_other;
    int status;
    int class_v1;
    int class_v2;
    if (argc != 4) {
        printf("usage: %s V1.weights.bin V2.weights.bin OTHER.weights.bin\n", argv[0]);
        return 2;
    }
    n1 = read_file(argv[1], v1, sizeof(v1));
    n2 = read_file(argv[2], v2, sizeof(v2));
    n_other = read_file(argv[3], other, sizeof(other));
    printf("blob v1: %lu bytes, blob v2: %lu bytes, slots of %lu bytes\n", (unsigned long)n1,
           (unsigned long)n2, (unsigned long)SLOT_SIZE);

    printf("1. before any blob is loaded\n");
    status = ota_model_run(NULL, NULL);
    printf("  ota_model_run -> %s\n", status_name(status));
    expect(status, OTA_MODEL_ERR_NO_WEIGHTS, "a run without weights");

    printf("2. factory image: v1 in slot A, boot\n");
    program_slot(SLOT_A, v1, n1);
    boot_record = SLOT_A;
    boot();
    expect(active == SLOT_A ? OTA_MODEL_OK : -1, OTA_MODEL_OK, "booting slot A");
    class_v1 = classify();

    printf("3. update to v2, one bit flipped in transit\n");
    memcpy(damaged, v2, n2);
    damaged[n2 / 2] ^= 0x10u;
    expect(update(damaged, n2), OTA_MODEL_ERR_BLOB_CRC, "a flipped bit");
    expect(classify() == class_v1 ? 0 : -1, 0, "inference after a refused update");

    printf("4. update to v2, connection lost after 60%%\n");
    expect(update(v2, n2 * 3u / 5u), OTA_MODEL_ERR_BLOB_TRUNCATED, "a truncated blob");
    expect(classify() == class_v1 ? 0 : -1, 0, "inference after a refused update");

    printf("5. update with the blob of another model\n");
    expect(update(other, n_other), OTA_MODEL_ERR_BLOB_MODEL, "another model's blob");
    expect(classify() == class_v1 ? 0 : -1, 0, "inference after a refused update");

    printf("6. update to v2, intact\n");
    expect(update(v2, n2), OTA_MODEL_OK, "the intact v2 blob");
    class_v2 = classify();

    printf("7. reboot after slot %s decayed in flash: rollback\n", slot_name(active));
    slot(active)[100] ^= 0x01u;
    boot();
    expect(active == SLOT_A ? OTA_MODEL_OK : -1, OTA_MODEL_OK, "rolling back to slot A");
    expect(classify() == class_v1 ? 0 : -1, 0, "inference after the rollback");

    printf("%s (v1 says class %d, v2 class %d)\n", failures == 0 ? "all steps as expected" : "FAILED",
           class_v1, class_v2);
    return failures == 0 ? 0 : 1;
}
