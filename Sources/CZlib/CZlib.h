#ifndef STREAMING_MULTIPART_CZLIB_H
#define STREAMING_MULTIPART_CZLIB_H

#include <zlib.h>

/// zlib's init functions are macros that Swift cannot import; these wrappers are the one shim we need.
static inline int czlib_deflateInit2(z_streamp strm, int level, int method, int windowBits, int memLevel, int strategy) {
    return deflateInit2(strm, level, method, windowBits, memLevel, strategy);
}

static inline int czlib_inflateInit2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}

#endif
