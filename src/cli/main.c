/* Placeholder: the CLI is being written (raw-request first). */
#include <stdio.h>
#include "ocisbx/ocisbx.h"
int main(void)
{
    printf("ocisbx %s\n", ocisbx_version());
    return 0;
}
