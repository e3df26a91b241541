/* Callgrind region for runtimes driven from Python (the TFLite Micro interpreter, onnxruntime):
 * bench_region(fn) collects instructions only while fn runs. Python passes fn as a ctypes
 * callback that makes one inference call; the instructions of an empty callback are measured
 * the same way and subtracted. Run under valgrind --tool=callgrind --collect-atstart=no
 * --instr-atstart=no: start-up and model loading are not even instrumented. */
#include <valgrind/callgrind.h>

void bench_region(void (*fn)(void));

void bench_region(void (*fn)(void))
{
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_TOGGLE_COLLECT;
    fn();
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_STOP_INSTRUMENTATION;
}
