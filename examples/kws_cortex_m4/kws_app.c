/* kws_app.c: keyword spotting on a microcontroller. One second of audio features in (49 frames
 * of 10 MFCCs, the MLPerf Tiny KWS front end), the word that was said out, on the console.
 *
 * The features are linked into the image (the project's kiln_input.S, `INPUT=yes.bin`); in a
 * product they come from the microphone's front end, a new frame every 20 ms. The model is the
 * code Kiln generated (kws.h, `kiln build ... --name kws`); int8 and float32 builds both work. */
#include <stdint.h>

#include "kiln_console.h"
#include "kws.h"

#define EXIT_BAD_INPUT 2
#define EXIT_MODEL_ERROR 3

/* The MLPerf Tiny KWS classes, in the order of the model's output. */
static const char *const labels[] = {"down", "go",   "left", "no",      "off",    "on",
                                     "right", "stop", "up",   "yes",     "silence", "unknown"};
typedef char labels_match_the_model[(sizeof labels / sizeof labels[0] == KWS_OUTPUT_0_ELEMENTS) ? 1 : -1];

extern const uint8_t kiln_input[];
extern const uint8_t kiln_input_end[];

#ifdef KWS_INPUT_0_SCALE
static int8_t features[KWS_INPUT_0_ELEMENTS];
static int8_t scores[KWS_OUTPUT_0_ELEMENTS];
#define PERCENT(q) ((int32_t)((float)((q) - KWS_OUTPUT_0_ZERO_POINT) * KWS_OUTPUT_0_SCALE * 100.0f + 0.5f))
#else
static float features[KWS_INPUT_0_ELEMENTS];
static float scores[KWS_OUTPUT_0_ELEMENTS];
#define PERCENT(p) ((int32_t)((p) * 100.0f + 0.5f))
#endif

int main(void)
{
    const uint32_t bytes = (uint32_t)(kiln_input_end - kiln_input);
    uint8_t *dst = (uint8_t *)(void *)features;
    uint32_t k;
    uint32_t best = 0;
    if (bytes != (uint32_t)sizeof(features)) {
        kiln_console_write("kws: the input has ");
        kiln_console_int((int32_t)bytes);
        kiln_console_write(" bytes of features, the model takes ");
        kiln_console_int((int32_t)sizeof(features));
        kiln_console_write("\n");
        return EXIT_BAD_INPUT;
    }
    for (k = 0; k < bytes; ++k) {
        dst[k] = kiln_input[k];
    }
    if (kws_run(features, scores) != KWS_OK) {
        kiln_console_write("kws: the model returned an error\n");
        return EXIT_MODEL_ERROR;
    }
    for (k = 1; k < KWS_OUTPUT_0_ELEMENTS; ++k) {
        if (scores[k] > scores[best]) {
            best = k;
        }
    }
    kiln_console_write("heard: ");
    kiln_console_write(labels[best]);
    kiln_console_write(" (");
    kiln_console_int(PERCENT(scores[best]));
    kiln_console_write(" %)\n");
    return 0;
}
