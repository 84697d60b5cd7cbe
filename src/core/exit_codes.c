/* exit_codes.c — the kind of the first failure reported (see exit_codes.h). */
#include "core/exit_codes.h"

#include <stdatomic.h>

static atomic_int first_kind;

void exit_code_note(int code) {
    int none = 0;
    if (code > 0) atomic_compare_exchange_strong(&first_kind, &none, code);
}

int exit_code_resolve(int rc) {
    int kind = atomic_load(&first_kind);
    return (rc == EXIT_FAILED || rc == EXIT_USAGE) && kind ? kind : rc;
}
