// gettext (part of the C library on glibc), for the UI text's translations: Swift's Glibc
// module does not include <libintl.h>.
#ifndef SESAME_LIBINTL_SHIM_H
#define SESAME_LIBINTL_SHIM_H
#include <libintl.h>
#include <locale.h>
#endif
