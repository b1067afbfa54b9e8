#ifndef SESAME_TPM_H
#define SESAME_TPM_H

#include <stddef.h>
#include <stdint.h>

/* The device's two RSA-2048 keys in a TPM 2.0, through tpm2-tss's ESYS (sesame_tpm.c says how).
   A key leaves the TPM only as its *blob*: the TPM2B_PUBLIC and TPM2B_PRIVATE marshalled one after
   the other, the private part encrypted by the TPM's storage key, so it loads only in that TPM.
   Every call opens the TPM named by `tcti` ("device:/dev/tpmrm0", "swtpm:path=…") and closes it. */

typedef enum {
    /* RS256: signs SHA-256 digests (RSASSA-PKCS1-v1_5); the device key. */
    SESAME_TPM_SIGNING = 0,
    /* RSA-OAEP (SHA-1) decryption; the transport key. */
    SESAME_TPM_DECRYPTION = 1,
} sesame_tpm_key_use;

/* What a call gave: `ok` 1 with `bytes` (malloc'd; free with sesame_tpm_result_free, which
   zeroes them first), or `ok` 0 with `message`: the step that failed and the TPM's own words. */
typedef struct {
    int ok;
    uint8_t *bytes;
    size_t size;
    char message[320];
} sesame_tpm_result;

void sesame_tpm_result_free(sesame_tpm_result *result);

/* Opens the TPM and asks one harmless question (its manufacturer): whether it can be used. */
sesame_tpm_result sesame_tpm_probe(const char *tcti);

/* A new key made inside the TPM under its storage key; the result is the key's blob. */
sesame_tpm_result sesame_tpm_create(const char *tcti, sesame_tpm_key_use use);

/* The key's public half from its blob (no TPM needed): the modulus (big-endian), and in
   `exponent` the public exponent. */
sesame_tpm_result sesame_tpm_public(const uint8_t *blob, size_t blob_size, uint32_t *exponent);

/* The RSASSA-PKCS1-v1_5 signature (big-endian, the modulus' length) of a SHA-256 digest. */
sesame_tpm_result sesame_tpm_sign(const char *tcti, const uint8_t *blob, size_t blob_size, const uint8_t *digest,
                                  size_t digest_size);

/* RSA-OAEP (SHA-1, no label) decryption of `cipher` (the modulus' length). */
sesame_tpm_result sesame_tpm_decrypt(const char *tcti, const uint8_t *blob, size_t blob_size, const uint8_t *cipher,
                                     size_t cipher_size);

/* `secret` (at most 128 bytes) sealed to this TPM: the result is a blob only this TPM unseals. */
sesame_tpm_result sesame_tpm_seal(const char *tcti, const uint8_t *secret, size_t secret_size);

/* What sesame_tpm_seal sealed, from its blob. */
sesame_tpm_result sesame_tpm_unseal(const char *tcti, const uint8_t *blob, size_t blob_size);

#endif
