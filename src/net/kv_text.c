/* The "key=value" lines of text payloads (kv_text.h). */
#include "kv_text.h"

#include <string.h>

const char *sw__text_value(const char *text, const char *key)
{
    size_t k = strlen(key);
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line)
        if (!strncmp(line, key, k) && line[k] == '=')
            return line + k + 1;
    return NULL;
}
