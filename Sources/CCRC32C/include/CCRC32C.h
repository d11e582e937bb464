#ifndef STREAMING_MULTIPART_CCRC32C_H
#define STREAMING_MULTIPART_CCRC32C_H

#include <stddef.h>
#include <stdint.h>

/// CRC-32C (Castagnoli, as iSCSI, ext4 and S3's `x-amz-checksum-crc32c` use it) of `count` bytes at `bytes`,
/// continuing `crc` (0 for the first bytes). On x86-64 with SSE 4.2 and on ARMv8 with its CRC extension it runs on
/// the processor's CRC instructions; elsewhere on a table.
uint32_t sm_crc32c_update(uint32_t crc, const uint8_t *bytes, size_t count);

/// `sm_crc32c_update` on the table alone, whatever the processor: the fallback, for its tests.
uint32_t sm_crc32c_update_table(uint32_t crc, const uint8_t *bytes, size_t count);

/// Whether `sm_crc32c_update` runs on the processor's CRC instructions here.
int sm_crc32c_is_hardware(void);

#endif
