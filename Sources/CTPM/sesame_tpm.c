/* The device's keys in a TPM 2.0 (sesame_tpm.h), after TCG's provisioning guidance and the
   calls tpm2-tss's own tests make (docs/design/tpm-keys-research.md):
   - the storage key is the standard ECC P-256 primary of the owner hierarchy, re-derived from the
     owner seed at each call (so nothing is ever made persistent in the TPM, and a TPM cleared by
     its owner makes the blobs unloadable, as it must);
   - each key is an ordinary RSA-2048 child (fixed to this TPM and this parent, no dictionary-attack
     lockout: its authorization value is empty and only the blob's holder can load it);
   - signing and decrypting run in a salted HMAC session whose response is encrypted (AES-128-CFB),
     so the session key the transport key decrypts crosses the bus to the TPM encrypted. */

#include "sesame_tpm.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

typedef struct {
    TSS2_TCTI_CONTEXT *tcti;
    ESYS_CONTEXT *esys;
    ESYS_TR storage;
    ESYS_TR key;
    ESYS_TR session;
} tpm;

static sesame_tpm_result failure(const char *step, TSS2_RC rc) {
    sesame_tpm_result result = {0};
    snprintf(result.message, sizeof result.message, "%s: %s", step, Tss2_RC_Decode(rc));
    return result;
}

static sesame_tpm_result failure_text(const char *text) {
    sesame_tpm_result result = {0};
    snprintf(result.message, sizeof result.message, "%s", text);
    return result;
}

static sesame_tpm_result success(const void *bytes, size_t size) {
    sesame_tpm_result result = {0};
    result.bytes = malloc(size ? size : 1);
    if (!result.bytes) return failure_text("out of memory");
    memcpy(result.bytes, bytes, size);
    result.size = size;
    result.ok = 1;
    return result;
}

void sesame_tpm_result_free(sesame_tpm_result *result) {
    if (result->bytes) {
        explicit_bzero(result->bytes, result->size);
        free(result->bytes);
    }
    result->bytes = NULL;
    result->size = 0;
}

static void tpm_close(tpm *t) {
    if (t->esys) {
        if (t->session != ESYS_TR_NONE) Esys_FlushContext(t->esys, t->session);
        if (t->key != ESYS_TR_NONE) Esys_FlushContext(t->esys, t->key);
        if (t->storage != ESYS_TR_NONE) Esys_FlushContext(t->esys, t->storage);
        Esys_Finalize(&t->esys);
    }
    if (t->tcti) Tss2_TctiLdr_Finalize(&t->tcti);
}

/* tpm2-tss writes its own warnings to stderr unless told otherwise; Sesame says what failed.
   Once per process: setenv is not safe beside other threads' getenv, so it is not repeated. */
static void set_library_log(void) { setenv("TSS2_LOG", "all+NONE", 0); }
static void quiet_library_log(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, set_library_log);
}

/* The device TCTI opens /dev/tpmrm0 without O_CLOEXEC: a program Sesame starts meanwhile (WebKit's
   processes, a browser) must not inherit it. Its descriptors are marked as soon as it is open. */
static void close_tcti_on_exec(TSS2_TCTI_CONTEXT *tcti) {
    TSS2_TCTI_POLL_HANDLE handles[4];
    size_t count = sizeof handles / sizeof handles[0];
    if (Tss2_Tcti_GetPollHandles(tcti, handles, &count) != TSS2_RC_SUCCESS) return;
    for (size_t i = 0; i < count && i < sizeof handles / sizeof handles[0]; i++) {
        int flags = fcntl(handles[i].fd, F_GETFD);
        if (flags >= 0) fcntl(handles[i].fd, F_SETFD, flags | FD_CLOEXEC);
    }
}

static TSS2_RC tpm_open(const char *tcti, tpm *t, const char **step) {
    quiet_library_log();
    *t = (tpm){.storage = ESYS_TR_NONE, .key = ESYS_TR_NONE, .session = ESYS_TR_NONE};
    *step = "opening the TPM";
    TSS2_RC rc = Tss2_TctiLdr_Initialize(tcti, &t->tcti);
    if (rc != TSS2_RC_SUCCESS) return rc;
    close_tcti_on_exec(t->tcti);
    return Esys_Initialize(&t->esys, t->tcti, NULL);
}

/* The owner hierarchy's standard storage key (TCG Provisioning Guidance 7.5.1, ECC P-256). */
static TSS2_RC create_storage_key(tpm *t, const char **step) {
    *step = "making the TPM's storage key";
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    TPM2B_PUBLIC template = {
        .publicArea = {
            .type = TPM2_ALG_ECC,
            .nameAlg = TPM2_ALG_SHA256,
            .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
                                TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED |
                                TPMA_OBJECT_DECRYPT,
            .parameters.eccDetail = {
                .symmetric = {.algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB},
                .scheme = {.scheme = TPM2_ALG_NULL},
                .curveID = TPM2_ECC_NIST_P256,
                .kdf = {.scheme = TPM2_ALG_NULL},
            },
            .unique.ecc = {.x = {.size = 32}, .y = {.size = 32}},
        },
    };
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION pcrs = {0};
    return Esys_CreatePrimary(t->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive,
                              &template, &outside, &pcrs, &t->storage, NULL, NULL, NULL, NULL);
}

/* A session salted with the storage key, in which the TPM encrypts the first parameter of its
   response (TPMA_SESSION_ENCRYPT) or of the command (TPMA_SESSION_DECRYPT). */
static TSS2_RC start_session(tpm *t, TPMA_SESSION direction, const char **step) {
    *step = "starting an encrypted session with the TPM";
    TPMT_SYM_DEF symmetric = {.algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB};
    TSS2_RC rc = Esys_StartAuthSession(t->esys, t->storage, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                       NULL, TPM2_SE_HMAC, &symmetric, TPM2_ALG_SHA256, &t->session);
    if (rc != TSS2_RC_SUCCESS) return rc;
    return Esys_TRSess_SetAttributes(t->esys, t->session,
                                     direction | TPMA_SESSION_CONTINUESESSION, 0xff);
}

/* An object's blob: its TPM2B_PUBLIC and TPM2B_PRIVATE, marshalled one after the other. */
static sesame_tpm_result blob_of(const TPM2B_PUBLIC *public, const TPM2B_PRIVATE *private) {
    uint8_t blob[sizeof(TPM2B_PUBLIC) + sizeof(TPM2B_PRIVATE)];
    size_t size = 0;
    TSS2_RC rc = Tss2_MU_TPM2B_PUBLIC_Marshal(public, blob, sizeof blob, &size);
    if (rc == TSS2_RC_SUCCESS) rc = Tss2_MU_TPM2B_PRIVATE_Marshal(private, blob, sizeof blob, &size);
    return rc == TSS2_RC_SUCCESS ? success(blob, size) : failure("writing the object's blob", rc);
}

static int split_blob(const uint8_t *blob, size_t size, TPM2B_PUBLIC *public, TPM2B_PRIVATE *private) {
    size_t offset = 0;
    *public = (TPM2B_PUBLIC){0};
    *private = (TPM2B_PRIVATE){0};
    if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(blob, size, &offset, public) != TSS2_RC_SUCCESS) return 0;
    if (private && Tss2_MU_TPM2B_PRIVATE_Unmarshal(blob, size, &offset, private) != TSS2_RC_SUCCESS) return 0;
    return offset == size;
}

/* Opens the TPM, derives the storage key, loads the blob's key and starts the session. */
static TSS2_RC open_key(const char *tcti, const uint8_t *blob, size_t size, tpm *t, const char **step) {
    TPM2B_PUBLIC public;
    TPM2B_PRIVATE private;
    if (!split_blob(blob, size, &public, &private)) {
        *step = "reading the kept key";
        return TSS2_ESYS_RC_BAD_VALUE;
    }
    TSS2_RC rc = tpm_open(tcti, t, step);
    if (rc == TSS2_RC_SUCCESS) rc = create_storage_key(t, step);
    if (rc != TSS2_RC_SUCCESS) return rc;
    *step = "loading the key into the TPM (a TPM cleared since, or another one, cannot)";
    rc = Esys_Load(t->esys, t->storage, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &private, &public, &t->key);
    if (rc != TSS2_RC_SUCCESS) return rc;
    return start_session(t, TPMA_SESSION_ENCRYPT, step);
}

sesame_tpm_result sesame_tpm_probe(const char *tcti) {
    tpm t;
    const char *step;
    TSS2_RC rc = tpm_open(tcti, &t, &step);
    TPMS_CAPABILITY_DATA *data = NULL;
    if (rc == TSS2_RC_SUCCESS) {
        step = "asking the TPM what it is";
        rc = Esys_GetCapability(t.esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES,
                                TPM2_PT_MANUFACTURER, 1, NULL, &data);
    }
    Esys_Free(data);
    tpm_close(&t);
    return rc == TSS2_RC_SUCCESS ? success("", 0) : failure(step, rc);
}

sesame_tpm_result sesame_tpm_create(const char *tcti, sesame_tpm_key_use use) {
    tpm t;
    const char *step;
    TSS2_RC rc = tpm_open(tcti, &t, &step);
    if (rc == TSS2_RC_SUCCESS) rc = create_storage_key(&t, &step);
    TPM2B_PUBLIC *public = NULL;
    TPM2B_PRIVATE *private = NULL;
    if (rc == TSS2_RC_SUCCESS) {
        step = use == SESAME_TPM_SIGNING ? "making the device key in the TPM" : "making the transport key in the TPM";
        TPM2B_SENSITIVE_CREATE sensitive = {0};
        TPM2B_PUBLIC template = {
            .publicArea = {
                .type = TPM2_ALG_RSA,
                .nameAlg = TPM2_ALG_SHA256,
                .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
                                    TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA |
                                    (use == SESAME_TPM_SIGNING ? TPMA_OBJECT_SIGN_ENCRYPT : TPMA_OBJECT_DECRYPT),
                .parameters.rsaDetail = {
                    .symmetric = {.algorithm = TPM2_ALG_NULL},
                    .scheme = use == SESAME_TPM_SIGNING
                                  ? (TPMT_RSA_SCHEME){.scheme = TPM2_ALG_RSASSA, .details.rsassa.hashAlg = TPM2_ALG_SHA256}
                                  : (TPMT_RSA_SCHEME){.scheme = TPM2_ALG_OAEP, .details.oaep.hashAlg = TPM2_ALG_SHA1},
                    .keyBits = 2048,
                    .exponent = 0,
                },
            },
        };
        TPM2B_DATA outside = {0};
        TPML_PCR_SELECTION pcrs = {0};
        rc = Esys_Create(t.esys, t.storage, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template, &outside,
                         &pcrs, &private, &public, NULL, NULL, NULL);
    }
    sesame_tpm_result result = rc == TSS2_RC_SUCCESS ? blob_of(public, private) : failure(step, rc);
    Esys_Free(public);
    Esys_Free(private);
    tpm_close(&t);
    return result;
}

sesame_tpm_result sesame_tpm_public(const uint8_t *blob, size_t blob_size, uint32_t *exponent) {
    TPM2B_PUBLIC public;
    TPM2B_PRIVATE private;
    if (!split_blob(blob, blob_size, &public, &private) || public.publicArea.type != TPM2_ALG_RSA)
        return failure_text("the kept key is not an RSA key made by a TPM");
    uint32_t e = public.publicArea.parameters.rsaDetail.exponent;
    *exponent = e == 0 ? 65537 : e;
    return success(public.publicArea.unique.rsa.buffer, public.publicArea.unique.rsa.size);
}

sesame_tpm_result sesame_tpm_sign(const char *tcti, const uint8_t *blob, size_t blob_size, const uint8_t *digest,
                                  size_t digest_size) {
    if (digest_size != 32) return failure_text("a SHA-256 digest is 32 bytes");
    tpm t;
    const char *step;
    TSS2_RC rc = open_key(tcti, blob, blob_size, &t, &step);
    TPMT_SIGNATURE *signature = NULL;
    if (rc == TSS2_RC_SUCCESS) {
        step = "signing with the device key";
        TPM2B_DIGEST in = {.size = 32};
        memcpy(in.buffer, digest, 32);
        TPMT_SIG_SCHEME scheme = {.scheme = TPM2_ALG_RSASSA, .details.rsassa.hashAlg = TPM2_ALG_SHA256};
        TPMT_TK_HASHCHECK validation = {.tag = TPM2_ST_HASHCHECK, .hierarchy = TPM2_RH_NULL};
        rc = Esys_Sign(t.esys, t.key, t.session, ESYS_TR_NONE, ESYS_TR_NONE, &in, &scheme, &validation, &signature);
    }
    sesame_tpm_result result = rc == TSS2_RC_SUCCESS
                                   ? success(signature->signature.rsassa.sig.buffer, signature->signature.rsassa.sig.size)
                                   : failure(step, rc);
    Esys_Free(signature);
    tpm_close(&t);
    return result;
}

sesame_tpm_result sesame_tpm_decrypt(const char *tcti, const uint8_t *blob, size_t blob_size, const uint8_t *cipher,
                                     size_t cipher_size) {
    if (cipher_size > TPM2_MAX_RSA_KEY_BYTES) return failure_text("the encrypted key is longer than the transport key");
    tpm t;
    const char *step;
    TSS2_RC rc = open_key(tcti, blob, blob_size, &t, &step);
    TPM2B_PUBLIC_KEY_RSA *message = NULL;
    if (rc == TSS2_RC_SUCCESS) {
        step = "decrypting with the transport key";
        TPM2B_PUBLIC_KEY_RSA in = {.size = (UINT16)cipher_size};
        memcpy(in.buffer, cipher, cipher_size);
        TPMT_RSA_DECRYPT scheme = {.scheme = TPM2_ALG_OAEP, .details.oaep.hashAlg = TPM2_ALG_SHA1};
        TPM2B_DATA label = {0};
        rc = Esys_RSA_Decrypt(t.esys, t.key, t.session, ESYS_TR_NONE, ESYS_TR_NONE, &in, &scheme, &label, &message);
    }
    sesame_tpm_result result = rc == TSS2_RC_SUCCESS ? success(message->buffer, message->size) : failure(step, rc);
    if (message) explicit_bzero(message, sizeof *message);
    Esys_Free(message);
    tpm_close(&t);
    return result;
}

sesame_tpm_result sesame_tpm_seal(const char *tcti, const uint8_t *secret, size_t secret_size) {
    if (secret_size > 128) return failure_text("the TPM seals at most 128 bytes");
    tpm t;
    const char *step;
    TSS2_RC rc = tpm_open(tcti, &t, &step);
    if (rc == TSS2_RC_SUCCESS) rc = create_storage_key(&t, &step);
    if (rc == TSS2_RC_SUCCESS) rc = start_session(&t, TPMA_SESSION_DECRYPT, &step);
    TPM2B_PUBLIC *public = NULL;
    TPM2B_PRIVATE *private = NULL;
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    if (rc == TSS2_RC_SUCCESS) {
        step = "sealing the session key in the TPM";
        sensitive.sensitive.data.size = (UINT16)secret_size;
        memcpy(sensitive.sensitive.data.buffer, secret, secret_size);
        TPM2B_PUBLIC template = {
            .publicArea = {
                .type = TPM2_ALG_KEYEDHASH,
                .nameAlg = TPM2_ALG_SHA256,
                .objectAttributes =
                    TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA,
                .parameters.keyedHashDetail.scheme = {.scheme = TPM2_ALG_NULL},
            },
        };
        TPM2B_DATA outside = {0};
        TPML_PCR_SELECTION pcrs = {0};
        rc = Esys_Create(t.esys, t.storage, t.session, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template, &outside, &pcrs,
                         &private, &public, NULL, NULL, NULL);
    }
    explicit_bzero(&sensitive, sizeof sensitive);
    sesame_tpm_result result = rc == TSS2_RC_SUCCESS ? blob_of(public, private) : failure(step, rc);
    Esys_Free(public);
    Esys_Free(private);
    tpm_close(&t);
    return result;
}

sesame_tpm_result sesame_tpm_unseal(const char *tcti, const uint8_t *blob, size_t blob_size) {
    tpm t;
    const char *step;
    TSS2_RC rc = open_key(tcti, blob, blob_size, &t, &step);
    TPM2B_SENSITIVE_DATA *data = NULL;
    if (rc == TSS2_RC_SUCCESS) {
        step = "unsealing the session key";
        rc = Esys_Unseal(t.esys, t.key, t.session, ESYS_TR_NONE, ESYS_TR_NONE, &data);
    }
    sesame_tpm_result result = rc == TSS2_RC_SUCCESS ? success(data->buffer, data->size) : failure(step, rc);
    if (data) explicit_bzero(data, sizeof *data);
    Esys_Free(data);
    tpm_close(&t);
    return result;
}
