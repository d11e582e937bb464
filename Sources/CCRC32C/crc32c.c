// CRC-32C, the one C file of the package: Swift cannot emit the processor's CRC instructions, and no library on the
// platforms we build for (zlib has CRC-32 only) offers CRC-32C. Three streams run side by side over blocks of
// 3 x 4 KiB, since one CRC instruction's result takes three cycles; they are joined with the "shift by 4 KiB of
// zeros" table built once, as in Mark Adler's crc32c.c (public domain), whose layout this follows.
#include "CCRC32C.h"

#include <pthread.h>

#define POLY 0x82f63b78u  // CRC-32C, reflected
#define BLOCK 4096        // bytes per stream in a three-stream block

static uint32_t byte_table[8][256];  // slice-by-8 for the fallback and the ragged ends
static uint32_t shift_table[4][256]; // multiply by x^(8 * BLOCK), byte-wise
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

// x^(8 * n) mod P applied to crc, by repeated squaring of the shift operator (computed once, for BLOCK).
static uint32_t multiply(uint32_t a, uint32_t b) {  // a * b mod P, reflected
    uint32_t product = 0;
    for (uint32_t m = 1u << 31; m; m >>= 1) {
        if (a & m) {
            product ^= b;
            if ((a & (m - 1)) == 0) break;
        }
        b = b & 1 ? (b >> 1) ^ POLY : b >> 1;
    }
    return product;
}

static uint32_t x_to_the_8n(size_t n) {  // x^(8n) mod P, reflected
    uint32_t result = 1u << 31, square = 1u << 23;  // x^0, x^8
    while (n) {
        if (n & 1) result = multiply(square, result);
        square = multiply(square, square);
        n >>= 1;
    }
    return result;
}

static void build_tables(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t crc = n;
        for (int k = 0; k < 8; k++) crc = crc & 1 ? (crc >> 1) ^ POLY : crc >> 1;
        byte_table[0][n] = crc;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t crc = byte_table[0][n];
        for (int k = 1; k < 8; k++) {
            crc = byte_table[0][crc & 0xff] ^ (crc >> 8);
            byte_table[k][n] = crc;
        }
    }
    uint32_t shift = x_to_the_8n(BLOCK);
    for (uint32_t n = 0; n < 256; n++) {
        for (int k = 0; k < 4; k++) shift_table[k][n] = multiply(n << (8 * k), shift);
    }
}

static uint32_t shifted(uint32_t crc) {  // crc followed by BLOCK zero bytes, without its pre- and post-conditioning
    return shift_table[0][crc & 0xff] ^ shift_table[1][(crc >> 8) & 0xff] ^ shift_table[2][(crc >> 16) & 0xff]
        ^ shift_table[3][crc >> 24];
}

static uint32_t software(uint32_t crc, const uint8_t *bytes, size_t count) {  // on the raw (inverted) crc
    while (count && ((uintptr_t)bytes & 7)) {
        crc = byte_table[0][(crc ^ *bytes++) & 0xff] ^ (crc >> 8);
        count--;
    }
    while (count >= 8) {
        uint64_t word;
        __builtin_memcpy(&word, bytes, 8);
        word ^= crc;  // little-endian: the platforms we build for
        crc = byte_table[7][word & 0xff] ^ byte_table[6][(word >> 8) & 0xff] ^ byte_table[5][(word >> 16) & 0xff]
            ^ byte_table[4][(word >> 24) & 0xff] ^ byte_table[3][(word >> 32) & 0xff]
            ^ byte_table[2][(word >> 40) & 0xff] ^ byte_table[1][(word >> 48) & 0xff] ^ byte_table[0][word >> 56];
        bytes += 8;
        count -= 8;
    }
    while (count--) crc = byte_table[0][(crc ^ *bytes++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
#define HARDWARE_ATTRIBUTE __attribute__((target("sse4.2")))
#define CRC8(crc, word) (uint32_t) __builtin_ia32_crc32di((crc), (word))
#define CRC1(crc, byte) __builtin_ia32_crc32qi((crc), (byte))
static int hardware_present(void) { return __builtin_cpu_supports("sse4.2"); }
#elif defined(__aarch64__)
#define HARDWARE_ATTRIBUTE __attribute__((target("crc")))
#define CRC8(crc, word) __builtin_arm_crc32cd((crc), (word))
#define CRC1(crc, byte) __builtin_arm_crc32cb((crc), (byte))
#if defined(__APPLE__)
static int hardware_present(void) { return 1; }  // every Apple arm64 processor has the CRC extension
#else
#include <sys/auxv.h>
static int hardware_present(void) { return (getauxval(AT_HWCAP) & (1 << 7)) != 0; }  // HWCAP_CRC32
#endif
#endif

#ifdef HARDWARE_ATTRIBUTE
HARDWARE_ATTRIBUTE static uint32_t hardware(uint32_t crc, const uint8_t *bytes, size_t count) {
    while (count && ((uintptr_t)bytes & 7)) {
        crc = CRC1(crc, *bytes++);
        count--;
    }
    while (count >= 3 * BLOCK) {  // three streams, joined by shifting the first two over the blocks after them
        uint32_t crc1 = 0, crc2 = 0;
        const uint8_t *end = bytes + BLOCK;
        do {
            uint64_t a, b, c;
            __builtin_memcpy(&a, bytes, 8);
            __builtin_memcpy(&b, bytes + BLOCK, 8);
            __builtin_memcpy(&c, bytes + 2 * BLOCK, 8);
            crc = CRC8(crc, a);
            crc1 = CRC8(crc1, b);
            crc2 = CRC8(crc2, c);
            bytes += 8;
        } while (bytes < end);
        crc = shifted(crc) ^ crc1;
        crc = shifted(crc) ^ crc2;
        bytes += 2 * BLOCK;
        count -= 3 * BLOCK;
    }
    while (count >= 8) {
        uint64_t word;
        __builtin_memcpy(&word, bytes, 8);
        crc = CRC8(crc, word);
        bytes += 8;
        count -= 8;
    }
    while (count--) crc = CRC1(crc, *bytes++);
    return crc;
}
#endif

static int use_hardware = 0;

static void setup(void) {
    build_tables();
#ifdef HARDWARE_ATTRIBUTE
    use_hardware = hardware_present();
#endif
}

uint32_t sm_crc32c_update(uint32_t crc, const uint8_t *bytes, size_t count) {
    pthread_once(&tables_once, setup);
    crc = ~crc;
#ifdef HARDWARE_ATTRIBUTE
    if (use_hardware) return ~hardware(crc, bytes, count);
#endif
    return ~software(crc, bytes, count);
}

uint32_t sm_crc32c_update_table(uint32_t crc, const uint8_t *bytes, size_t count) {
    pthread_once(&tables_once, setup);
    return ~software(~crc, bytes, count);
}

int sm_crc32c_is_hardware(void) {
    pthread_once(&tables_once, setup);
    return use_hardware;
}
