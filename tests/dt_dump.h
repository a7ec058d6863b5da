/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dt_dump.h - the form of a tree dump (dt_tree_dump(), the daemon's DUMP),
 * for the tests that check it prints no address.
 */
#ifndef DT_TEST_DUMP_H
#define DT_TEST_DUMP_H

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A number of the dump: "%#" PRIx64. */
#define DT_DUMP_HEX "(0|0x[0-9a-f]+)"

/*
 * Whether every line of @text is one of the dump's four forms (tree, node,
 * leaf, entry): no other field, hence no address.  Prints the first line that is not.
 */
static inline bool dt_dump_grammar_ok(const char *text)
{
	static const char *const forms =
		"^ *(tree map_shift [0-9]+ nodes [0-9]+ entries [0-9]+"
		"|node [0-9]+ shift [0-9]+ base " DT_DUMP_HEX " last " DT_DUMP_HEX
		" used " DT_DUMP_HEX "( tags[0-9] " DT_DUMP_HEX ")+"
		"|leaf slot [0-9]+ keys [0-9]+"
		"|entry " DT_DUMP_HEX "-" DT_DUMP_HEX " order [0-9]+ (slot|key) [0-9]+ "
		"(value " DT_DUMP_HEX "|ptr #[0-9a-f]{16}|hole)( tag[0-9])*)$";
	char *copy = strdup(text), *line, *save = NULL;
	bool ok = copy != NULL;
	regex_t re;

	if (!ok || regcomp(&re, forms, REG_EXTENDED | REG_NOSUB)) {
		free(copy);
		return false;
	}
	for (line = strtok_r(copy, "\n", &save); ok && line; line = strtok_r(NULL, "\n", &save))
		if (regexec(&re, line, 0, NULL, 0)) {
			fprintf(stderr, "     dump line \"%s\"\n", line);
			ok = false;
		}
	regfree(&re);
	free(copy);
	return ok;
}

#endif /* DT_TEST_DUMP_H */
