# kiln_size.awk: flash and RAM of a firmware from `size -A`, against the board's budget
# (awk -v flash_budget=B -v ram_budget=B). Flash: every section stored in the image (code,
# constants, initial values of data); RAM: data, zero-initialised data and the stack. Sections
# that are not part of the running program (debug information, comments, attributes) count for
# neither. A weights blob linked in (section .kiln_weights) is flash, counted apart from the code
# image. Prints a `kiln-size` line that Kiln reads into the manifest; exit status 1 when over.
$2 !~ /^[0-9]+$/ || $1 == "Total" { next }
$1 ~ /^\.(comment|debug|ARM\.attributes|stab|gnu\.attributes|gnu_debuglink|gnu\.build)/ { next }
$1 ~ /^\.kiln_weights/ { blob += $2; next }
$1 ~ /^\.stack/ { stack += $2; next }
$1 ~ /^\.(bss|tbss|sbss|noinit)/ { bss += $2; next }
$1 ~ /^\.(data|tdata|sdata|got|init_array|fini_array|preinit_array)/ { data += $2; next }
$1 ~ /^\.rodata/ { rodata += $2; next }
{ text += $2 }
END {
    flash = text + rodata + data + blob
    ram = data + bss + stack
    printf "kiln-size text=%d rodata=%d data=%d bss=%d stack=%d blob=%d\n", text, rodata, data, bss, stack, blob
    printf "flash %10d B of %10d B (%5.1f %%): text %d + rodata %d + data %d%s\n", flash, flash_budget, \
        100.0 * flash / flash_budget, text, rodata, data, blob ? sprintf(" + weights blob %d", blob) : ""
    printf "RAM   %10d B of %10d B (%5.1f %%): data %d + bss %d + stack %d\n", ram, ram_budget, \
        100.0 * ram / ram_budget, data, bss, stack
    if (flash > flash_budget || ram > ram_budget) {
        print "over the board's budget"
        exit 1
    }
}
