/* sine_app.c: the "hello world" of TinyML on a microcontroller. TFLite Micro's trained sine model
 * (one float in, x in [0, 2 pi]; one float out, its estimate of sin x) runs once for each of
 * 25 points of a period, and the firmware draws the curve it gives on the console, with the
 * true sine beside it to compare. The model is the code Kiln generated (sine.h, `kiln build ...
 * --name sine`); the true sine comes from newlib's libm. */
#include <math.h>
#include <stdint.h>

#include "kiln_console.h"
#include "sine.h"

#define EXIT_MODEL_ERROR 3
#define POINTS 25
#define HALF_WIDTH 20 /* characters from the axis to +1 or -1 */
#define TWO_PI 6.28318531f

/* `value` with two decimals and its sign, without printf: "+0.84", "-1.00". */
static void print_fixed2(float value)
{
    const int32_t hundredths = (int32_t)(value * 100.0f + (value < 0.0f ? -0.5f : 0.5f));
    const int32_t magnitude = hundredths < 0 ? -hundredths : hundredths;
    kiln_console_write(hundredths < 0 ? "-" : "+");
    kiln_console_int(magnitude / 100);
    kiln_console_write(magnitude % 100 < 10 ? ".0" : ".");
    kiln_console_int(magnitude % 100);
}

/* One row of the plot: '*' where the model puts the curve, '|' on the axis. */
static void print_bar(float y)
{
    char row[2 * HALF_WIDTH + 2];
    int32_t k;
    float clamped = y > 1.0f ? 1.0f : (y < -1.0f ? -1.0f : y);
    const int32_t column = HALF_WIDTH + (int32_t)(clamped * (float)HALF_WIDTH + (clamped < 0.0f ? -0.5f : 0.5f));
    for (k = 0; k <= 2 * HALF_WIDTH; ++k) {
        row[k] = k == column ? '*' : (k == HALF_WIDTH ? '|' : ' ');
    }
    row[2 * HALF_WIDTH + 1] = '\0';
    kiln_console_write(row);
}

int main(void)
{
    float x[SINE_INPUT_0_ELEMENTS];
    float y[SINE_OUTPUT_0_ELEMENTS];
    float worst = 0.0f;
    int32_t i;
    kiln_console_write("    x   model  sin(x)\n");
    for (i = 0; i < POINTS; ++i) {
        x[0] = TWO_PI * (float)i / (float)(POINTS - 1);
        if (sine_run(x, y) != SINE_OK) {
            kiln_console_write("sine: the model returned an error\n");
            return EXIT_MODEL_ERROR;
        }
        print_fixed2(x[0]);
        kiln_console_write("  ");
        print_fixed2(y[0]);
        kiln_console_write("  ");
        print_fixed2(sinf(x[0]));
        kiln_console_write("  ");
        print_bar(y[0]);
        kiln_console_write("\n");
        if (fabsf(y[0] - sinf(x[0])) > worst) {
            worst = fabsf(y[0] - sinf(x[0]));
        }
    }
    kiln_console_write("largest difference from sin(x): ");
    print_fixed2(worst);
    kiln_console_write("\n");
    return 0;
}
