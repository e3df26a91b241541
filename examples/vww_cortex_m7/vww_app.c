/* vww_app.c: person detection on a microcontroller (MLPerf Tiny Visual Wake Words). A 96x96
 * RGB picture in, "person" or "no person" out, on the console.
 *
 * The picture's pixels (8-bit RGB, row by row) are linked into the image (the project's
 * kiln_input.S, INPUT=...); in a product they come from the camera. They are quantized here
 * with the input scale and zero point of the code Kiln generated (vww.h, `--name vww`). */
#include <stdint.h>

#include "kiln_console.h"
#include "vww.h"

#define EXIT_BAD_INPUT 2
#define EXIT_MODEL_ERROR 3

/* The model's two classes, in the order of its output. */
static const char *const labels[] = {"no person", "person"};
typedef char labels_match_the_model[(sizeof labels / sizeof labels[0] == VWW_OUTPUT_0_ELEMENTS) ? 1 : -1];

extern const uint8_t kiln_input[];
extern const uint8_t kiln_input_end[];

static int8_t image[VWW_INPUT_0_ELEMENTS];
static int8_t scores[VWW_OUTPUT_0_ELEMENTS];

/* A pixel value 0..255 as the model's int8: round(p / 255 / scale) + zero point, saturated. */
static int8_t quantize_pixel(uint8_t p)
{
    int32_t q = (int32_t)((float)p / 255.0f / VWW_INPUT_0_SCALE + 0.5f) + VWW_INPUT_0_ZERO_POINT;
    return (int8_t)(q < -128 ? -128 : (q > 127 ? 127 : q));
}

int main(void)
{
    const uint32_t pixels = (uint32_t)(kiln_input_end - kiln_input);
    uint32_t k;
    uint32_t best = 0;
    if (pixels != VWW_INPUT_0_ELEMENTS) {
        kiln_console_write("vww: the picture has ");
        kiln_console_int((int32_t)pixels);
        kiln_console_write(" bytes, the model takes 96x96 RGB: ");
        kiln_console_int((int32_t)VWW_INPUT_0_ELEMENTS);
        kiln_console_write("\n");
        return EXIT_BAD_INPUT;
    }
    for (k = 0; k < pixels; ++k) {
        image[k] = quantize_pixel(kiln_input[k]);
    }
    if (vww_run(image, scores) != VWW_OK) {
        kiln_console_write("vww: the model returned an error\n");
        return EXIT_MODEL_ERROR;
    }
    for (k = 1; k < VWW_OUTPUT_0_ELEMENTS; ++k) {
        if (scores[k] > scores[best]) {
            best = k;
        }
    }
    kiln_console_write("seen: ");
    kiln_console_write(labels[best]);
    kiln_console_write(" (");
    kiln_console_int((int32_t)((float)(scores[best] - VWW_OUTPUT_0_ZERO_POINT) * VWW_OUTPUT_0_SCALE * 100.0f + 0.5f));
    kiln_console_write(" %)\n");
    return 0;
}
