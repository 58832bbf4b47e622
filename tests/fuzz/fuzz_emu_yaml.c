/* Fuzz target: the emulator's tenancy file loader (keys are not read). */
#include <stdint.h>
#include <stdlib.h>

#include "emulator/emu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    emu_config *cfg = NULL;
    if (emu_config_parse((const char *)data, size, "fuzz.yaml", false, &cfg) == 0)
        emu_config_free(cfg);
    return 0;
}
