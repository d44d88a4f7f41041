#ifndef CFERRY_COMPRESSION_SHIM_H
#define CFERRY_COMPRESSION_SHIM_H

#include <zlib.h>
#include <zstd.h>
#include <bzlib.h>
#include <lzma.h>

/// inflateInit2 is a macro; this wrapper makes it callable from Swift.
static inline int cferry_inflate_init(z_stream *stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}

/// deflateInit2 is a macro; this wrapper makes it callable from Swift (memory level 8, the
/// default strategy).
static inline int cferry_deflate_init(z_stream *stream, int level, int window_bits) {
    return deflateInit2(stream, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
}

#endif
