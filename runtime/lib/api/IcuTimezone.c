/*===- IcuTimezone.c - ICU's non-PIC references, kept inside libtfm ------===*\
 *
 * Debian's libicuuc.a is built for executables (PIE): its putil.o reads
 * glibc's __timezone and tzname directly, which a shared object cannot (the linker
 * refuses R_X86_64_PC32 against a symbol of another library). libtfm links
 * ICU statically so that programs need not install it; these hidden
 * definitions resolve those references inside the library. ICU reads them
 * only in uprv_timezone() and uprv_tzname(), for its calendar and time zone services, which
 * the tokenizers (character classes and normalization) never call.
\*===----------------------------------------------------------------------===*/
__attribute__((visibility("hidden"))) long __timezone = 0;
__attribute__((visibility("hidden"))) char *tzname[2] = {"UTC", "UTC"};
