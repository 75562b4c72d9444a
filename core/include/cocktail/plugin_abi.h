/* The C waist between the host and a plugin library. A plugin exports exactly one symbol,
 * `cocktail_plugin_entry`, returning a descriptor that lives as long as the library. The host
 * checks the ABI version and struct size before it touches anything else. */
#ifndef COCKTAIL_PLUGIN_ABI_H
#define COCKTAIL_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COCKTAIL_PLUGIN_ENTRY_SYMBOL "cocktail_plugin_entry"

enum cocktail_plugin_kind {
  COCKTAIL_PLUGIN_BACKEND = 1,
  COCKTAIL_PLUGIN_PLANNER = 2,
  COCKTAIL_PLUGIN_SCORER = 3
};

/* create() status: 0 = success, COCKTAIL_CREATE_FAILED = any failure,
 * COCKTAIL_CREATE_BAD_CONFIG = a bad config value (the message names file, line and key). */
#define COCKTAIL_CREATE_FAILED 1
#define COCKTAIL_CREATE_BAD_CONFIG 2

/* Creates the plugin's object from its config table (a `cocktail::Options*`, may be null).
 * On success stores the object (a `cocktail::BackendProvider*`, `ChunkPlanner*` or `ChunkScorer*`
 * by kind) in *out and returns 0; on failure writes a message into error[error_size] and returns a
 * non-zero status. Never throws. */
typedef int (*cocktail_create_fn)(void* options, void** out, char* error, size_t error_size);
typedef void (*cocktail_destroy_fn)(void* object);

struct cocktail_plugin_descriptor {
  uint32_t abi_major;
  uint32_t abi_minor;
  uint32_t struct_size; /* sizeof(struct cocktail_plugin_descriptor) in the plugin's build */
  uint32_t kind;        /* enum cocktail_plugin_kind */
  const char* name;
  const char* version;
  const char* description;
  cocktail_create_fn create;
  cocktail_destroy_fn destroy;
};

typedef const struct cocktail_plugin_descriptor* (*cocktail_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* COCKTAIL_PLUGIN_ABI_H */
