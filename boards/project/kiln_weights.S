/* kiln_weights.S: the weights blob of a `--weights blob` build, linked into the image for the
 * project's main (the file given as `make WEIGHTS=file`, by default the blob Kiln wrote), in its
 * own section .kiln_weights between the symbols kiln_weights and kiln_weights_end. A product keeps
 * the blob in a flash slot of its own, updated apart from the code. */
    .section .kiln_weights, "a"
    .balign 16
    .global kiln_weights
    .global kiln_weights_end
kiln_weights:
    .incbin KILN_WEIGHTS_FILE
kiln_weights_end:
