// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * util/cxl-none.c - dt_cxl_scan() of a build without libcxl (see cxl.h):
 * an empty scan that says why.  Namespaces on the CXL nvdimm bus are still
 * known as CXL-backed (libndctl names the bus provider), only the memdevs,
 * regions and health are missing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cxl.h"

int dt_cxl_scan(struct dt_cxl **out, bool health)
{
	struct dt_cxl *cx = calloc(1, sizeof(*cx));

	*out = cx;
	if (!cx)
		return -ENOMEM;
	cx->no_libcxl = true;
	snprintf(cx->note, sizeof(cx->note), "built without libcxl: CXL devices not described");
	return 0;
}
