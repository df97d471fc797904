/*
 * test/win/include/cmocka.h - the Windows build only: Debian ships no
 * mingw-w64 cmocka, so the tests compile against the real cmocka.h (from the
 * host, found next in the include path) and link test/win/cmocka_mingw.c.
 *
 * On mingw-w64, GCC checks __printf__ format attributes against msvcrt's
 * dialect (no %zu, %lld); the tests print with C99's printf
 * (__USE_MINGW_ANSI_STDIO), so cmocka's printf-like functions are declared
 * with gnu_printf checks instead.
 */
#ifndef XRT_WIN_CMOCKA_H
#define XRT_WIN_CMOCKA_H
#define __printf__ gnu_printf
#include_next <cmocka.h>
#undef __printf__
#endif
