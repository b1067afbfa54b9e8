#ifndef SESAME_CLIBSECRET_SHIM_H
#define SESAME_CLIBSECRET_SHIM_H

/*
 * The few libsecret calls Sesame makes, wrapped so that Swift never handles a GHashTable, a
 * GError ** or a variadic argument list. Each wrapper takes plain C strings and returns a
 * SesameSecretResult by value; the caller frees it with sesame_secret_result_free().
 */

#include <libsecret/secret.h>
#include <string.h>

/** What a libsecret call produced: a secret (lookup only), or an error message. */
typedef struct {
    /** TRUE when the call succeeded (a lookup that found nothing also succeeds). */
    gboolean ok;
    /** The secret found by a lookup, or NULL; owned, freed with secret_password_free. */
    gchar *secret;
    /** The GError's message when ok is FALSE; owned, freed with g_free. */
    gchar *error_message;
    /** The GError's domain as a string (e.g. "g-dbus-error-quark"), or NULL; not owned. */
    const gchar *error_domain;
    /** The GError's code. */
    gint error_code;
    /** TRUE when what was asked about is behind a lock: a lookup found nothing it could read
     *  but a matching item in a locked collection, or the default collection is locked. */
    gboolean locked;
} SesameSecretResult;

/** The schema of Sesame's items: one attribute, the storage group, plus a kind. */
static inline const SecretSchema *sesame_secret_schema(void) {
    static const SecretSchema schema = {
        "org.sesame.TokenCache", SECRET_SCHEMA_NONE,
        {
            { "group", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { "kind", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { NULL, 0 },
        }
    };
    return &schema;
}

/**
 * The same schema for finding Sesame's items: with SECRET_SCHEMA_DONT_MATCH_NAME, libsecret does
 * not add `xdg:schema` to the search. gnome-keyring cannot match that attribute in a collection
 * it loaded locked (as every keyring is at a fresh login, until the session unlocks it): a
 * search including it finds nothing there, and a locked keyring would read as an empty one. The
 * items are still stored under the named schema (msal-extensions' lookups match the name).
 */
static inline const SecretSchema *sesame_secret_search_schema(void) {
    static const SecretSchema schema = {
        "org.sesame.TokenCache", SECRET_SCHEMA_DONT_MATCH_NAME,
        {
            { "group", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { "kind", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { NULL, 0 },
        }
    };
    return &schema;
}

/** Moves a GError into a result and frees it. */
static inline SesameSecretResult sesame_secret_result_from_error(GError *error) {
    SesameSecretResult result = { FALSE, NULL, NULL, NULL, 0, FALSE };
    if (error != NULL) {
        result.error_message = g_strdup(error->message);
        result.error_domain = g_quark_to_string(error->domain);
        result.error_code = error->code;
        g_error_free(error);
    }
    return result;
}

static inline GHashTable *sesame_secret_attributes(const gchar *group, const gchar *kind) {
    GHashTable *attributes = g_hash_table_new(g_str_hash, g_str_equal);
    g_hash_table_insert(attributes, (gpointer) "group", (gpointer) group);
    g_hash_table_insert(attributes, (gpointer) "kind", (gpointer) kind);
    return attributes;
}

/**
 * Whether an item of the group and kind is in a locked collection: searched without unlocking
 * anything (no prompt).
 */
static inline gboolean sesame_secret_item_is_locked(const gchar *group, const gchar *kind) {
    GError *error = NULL;
    SecretService *service = secret_service_get_sync(SECRET_SERVICE_NONE, NULL, &error);
    if (service == NULL) {
        g_clear_error(&error);
        return FALSE;
    }
    GHashTable *attributes = sesame_secret_attributes(group, kind);
    GList *items = secret_service_search_sync(service, sesame_secret_search_schema(), attributes, SECRET_SEARCH_ALL, NULL, &error);
    g_hash_table_unref(attributes);
    g_clear_error(&error);
    gboolean locked = FALSE;
    for (GList *item = items; item != NULL; item = item->next) {
        if (secret_item_get_locked(SECRET_ITEM(item->data))) {
            locked = TRUE;
        }
    }
    g_list_free_full(items, g_object_unref);
    g_object_unref(service);
    return locked;
}

/**
 * Looks up the item of a group and kind; ok with secret NULL when there is none.
 *
 * With unlock, an item in a locked collection makes the Secret Service show its unlock prompt
 * (on a desktop) and this waits for it; when the prompt is dismissed or cannot be shown, the
 * result is ok with secret NULL and locked TRUE. Without, nothing is unlocked and no prompt
 * shows: a matching item behind a lock gives locked TRUE at once.
 */
static inline SesameSecretResult sesame_secret_lookup(const gchar *group, const gchar *kind, gboolean unlock) {
    GError *error = NULL;
    GHashTable *attributes = sesame_secret_attributes(group, kind);
    if (unlock) {
        gchar *secret = secret_password_lookupv_sync(sesame_secret_search_schema(), attributes, NULL, &error);
        g_hash_table_unref(attributes);
        if (error != NULL) {
            return sesame_secret_result_from_error(error);
        }
        SesameSecretResult result = { TRUE, secret, NULL, NULL, 0, FALSE };
        if (secret == NULL) {
            result.locked = sesame_secret_item_is_locked(group, kind);
        }
        return result;
    }
    SecretService *service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL, &error);
    if (service == NULL) {
        g_hash_table_unref(attributes);
        return sesame_secret_result_from_error(error);
    }
    GList *items = secret_service_search_sync(service, sesame_secret_search_schema(), attributes,
                                              SECRET_SEARCH_ALL | SECRET_SEARCH_LOAD_SECRETS, NULL, &error);
    g_hash_table_unref(attributes);
    g_object_unref(service);
    if (error != NULL) {
        return sesame_secret_result_from_error(error);
    }
    SesameSecretResult result = { TRUE, NULL, NULL, NULL, 0, FALSE };
    for (GList *item = items; item != NULL; item = item->next) {
        if (secret_item_get_locked(SECRET_ITEM(item->data))) {
            result.locked = TRUE;
            continue;
        }
        SecretValue *value = secret_item_get_secret(SECRET_ITEM(item->data));
        if (value != NULL && result.secret == NULL) {
            const gchar *text = secret_value_get_text(value);
            if (text != NULL) {
                result.secret = g_strdup(text);
            }
        }
        if (value != NULL) {
            secret_value_unref(value);
        }
    }
    g_list_free_full(items, g_object_unref);
    if (result.secret != NULL) {
        result.locked = FALSE;
    }
    return result;
}

/** Creates or replaces the item of a group and kind in the default collection. */
static inline SesameSecretResult sesame_secret_store(const gchar *group, const gchar *kind, const gchar *label,
                                                     const gchar *secret) {
    GError *error = NULL;
    GHashTable *attributes = sesame_secret_attributes(group, kind);
    gboolean stored = secret_password_storev_sync(sesame_secret_schema(), attributes, SECRET_COLLECTION_DEFAULT,
                                                  label, secret, NULL, &error);
    g_hash_table_unref(attributes);
    if (!stored) {
        return sesame_secret_result_from_error(error);
    }
    SesameSecretResult result = { TRUE, NULL, NULL, NULL, 0, FALSE };
    return result;
}

/** Deletes the item of a group and kind; ok whether or not one existed. */
static inline SesameSecretResult sesame_secret_clear(const gchar *group, const gchar *kind) {
    GError *error = NULL;
    GHashTable *attributes = sesame_secret_attributes(group, kind);
    secret_password_clearv_sync(sesame_secret_schema(), attributes, NULL, &error);
    g_hash_table_unref(attributes);
    if (error != NULL) {
        return sesame_secret_result_from_error(error);
    }
    SesameSecretResult result = { TRUE, NULL, NULL, NULL, 0, FALSE };
    return result;
}

/**
 * The label of the collection behind the "default" alias, where sesame_secret_store puts items
 * (GNOME Keyring's "Login"), in the result's secret field (a label, not a secret; freed the same
 * way); ok with NULL when the service has no default collection yet.
 */
static inline SesameSecretResult sesame_secret_default_collection_label(void) {
    GError *error = NULL;
    SecretService *service = secret_service_get_sync(SECRET_SERVICE_NONE, NULL, &error);
    if (service == NULL) {
        return sesame_secret_result_from_error(error);
    }
    SecretCollection *collection = secret_collection_for_alias_sync(service, SECRET_COLLECTION_DEFAULT,
                                                                    SECRET_COLLECTION_NONE, NULL, &error);
    g_object_unref(service);
    if (error != NULL) {
        return sesame_secret_result_from_error(error);
    }
    SesameSecretResult result = { TRUE, NULL, NULL, NULL, 0, FALSE };
    if (collection != NULL) {
        result.secret = secret_collection_get_label(collection);
        result.locked = secret_collection_get_locked(collection);
        g_object_unref(collection);
    }
    return result;
}

/**
 * Asks the Secret Service to unlock the collection behind the "default" alias: it shows its own
 * prompt (the keyring's password, typed into the desktop's dialog, never into Sesame) and this
 * waits for the answer. ok with locked FALSE once it is unlocked; locked TRUE when the prompt
 * was dismissed.
 */
static inline SesameSecretResult sesame_secret_unlock_default(void) {
    GError *error = NULL;
    SecretService *service = secret_service_get_sync(SECRET_SERVICE_NONE, NULL, &error);
    if (service == NULL) {
        return sesame_secret_result_from_error(error);
    }
    SecretCollection *collection = secret_collection_for_alias_sync(service, SECRET_COLLECTION_DEFAULT,
                                                                    SECRET_COLLECTION_NONE, NULL, &error);
    if (error != NULL) {
        g_object_unref(service);
        return sesame_secret_result_from_error(error);
    }
    SesameSecretResult result = { TRUE, NULL, NULL, NULL, 0, FALSE };
    if (collection == NULL || !secret_collection_get_locked(collection)) {
        if (collection != NULL) {
            g_object_unref(collection);
        }
        g_object_unref(service);
        return result;
    }
    GList *objects = g_list_append(NULL, collection);
    GList *unlocked = NULL;
    secret_service_unlock_sync(service, objects, NULL, &unlocked, &error);
    g_list_free(objects);
    result.locked = g_list_length(unlocked) == 0;
    g_list_free_full(unlocked, g_object_unref);
    g_object_unref(collection);
    g_object_unref(service);
    if (error != NULL) {
        return sesame_secret_result_from_error(error);
    }
    return result;
}

/** Frees what a result owns (wiping the secret) and resets it. */
static inline void sesame_secret_result_free(SesameSecretResult *result) {
    if (result->secret != NULL) {
        secret_password_free(result->secret);
    }
    g_free(result->error_message);
    result->secret = NULL;
    result->error_message = NULL;
}

#endif
