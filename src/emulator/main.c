/* Placeholder: the emulator is being written. */
#include <stdio.h>
int main(void)
{
    fprintf(stderr, "ocisbx-emulator: not built yet\n");
    return 1;
}
