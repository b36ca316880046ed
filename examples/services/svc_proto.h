/* The example's two protocols. fs keeps its opcode at byte 0 (the default offset), block-driver
 * at byte 4, so the trace of a call to block-driver needs set_op_offset to show its opcode. */
#ifndef SVC_PROTO_H
#define SVC_PROTO_H

/* client -> fs: [op:u8][id:u32][deadline_ms:u64][block:u32] */
#define FS_OP_READ 1
#define FS_OP_STAT 2
#define FS_OFF_OP 0
#define FS_OFF_ID 1
#define FS_OFF_DEADLINE 5
#define FS_OFF_BLOCK 13
#define FS_REQ_LEN 17

/* fs -> block-driver: [id:u32][op:u8][deadline_ms:u64][lba:u32] */
#define BD_OP_READ_BLOCK 7
#define BD_OFF_ID 0
#define BD_OFF_OP 4
#define BD_OFF_DEADLINE 5
#define BD_OFF_LBA 13
#define BD_REQ_LEN 17

#define BLOCK_BYTES 16

#endif /* SVC_PROTO_H */
