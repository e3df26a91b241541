/* kiln_input.S: the model input of a Kiln board project, linked into the image: the raw bytes of
 * the file given as `make INPUT=file` (every input of the model back to back, in order), between
 * the symbols kiln_input and kiln_input_end. Without INPUT the two symbols are equal. */
    .section .rodata.kiln_input, "a"
    .balign 16
    .global kiln_input
    .global kiln_input_end
kiln_input:
#ifdef KILN_INPUT_FILE
    .incbin KILN_INPUT_FILE
#endif
kiln_input_end:
