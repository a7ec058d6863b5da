// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tree-node.c - the nodes of the multi-order tree: allocation, reclaim, and
 * the change of a node's kind by RCU replacement (tree-node.h has the layout).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tree-internal.h"

#ifdef DT_TSAN
unsigned long tree_tsan_grace;
#endif

/*
 * Node allocation and reclaim: all of an operation's nodes are taken before
 * it changes anything (struct prealloc), so that -ENOMEM always leaves the
 * tree as it was.
 */

void prealloc_release(struct prealloc *p)
{
	while (p->list) {
		struct dt_node *n = p->list;

		p->list = n->next_free;
		free(n);
	}
	while (p->leaves) {
		struct dt_leaf *l = p->leaves;

		p->leaves = l->next_free;
		free(l);
	}
}

/* A node slot keeps the node's kind in bit 3 of its pointer. */
_Static_assert(_Alignof(max_align_t) >= 16, "malloc() must align nodes to 16 bytes");

/* A node of @capacity slots from the allocator, or NULL (also when a test says so). */
static struct dt_node *node_alloc(struct dt_tree *t, unsigned capacity)
{
	struct dt_node *n;

	if (!alloc_allowed(t))
		return NULL;
	n = malloc(node_size(capacity));
	if (n)
		n->capacity = (uint8_t)capacity;
	return n;
}

/* Add @count nodes of @capacity slots to @p; on failure release all of @p. */
int prealloc_fill(struct dt_tree *t, struct prealloc *p, uint64_t count, unsigned capacity)
{
	for (uint64_t i = 0; i < count; i++) {
		struct dt_node *n = node_alloc(t, capacity);

		if (!n) {
			prealloc_release(p);
			return -ENOMEM;
		}
		n->next_free = p->list;
		p->list = n;
	}
	return 0;
}

/* Make @n an empty node of the tree, of its capacity. */
static struct dt_node *node_init(struct dt_tree *t, struct dt_node *n, unsigned shift,
				 uint64_t base)
{
	unsigned capacity = n->capacity;

	memset(n, 0, node_size(capacity));
	n->capacity = (uint8_t)capacity;
	if (!node_is_full(n))
		node_keys_clear(n);
	n->shift = (uint8_t)shift;
	n->base = base;
	t->nodes++;
	t->node_bytes += node_size(capacity);
	return n;
}

/* Take a node of @capacity slots from @p, which holds one. */
struct dt_node *node_take(struct dt_tree *t, struct prealloc *p, unsigned capacity,
			  unsigned shift, uint64_t base)
{
	struct dt_node **link = &p->list, *n;

	while ((*link)->capacity != capacity)
		link = &(*link)->next_free;
	n = *link;
	*link = n->next_free;
	return node_init(t, n, shift, base);
}

static void node_free_cb(struct rcu_head *head)
{
	tsan_acquire();
	free(caa_container_of(head, struct dt_node, rcu));
}

/* Unlink is done: free @n once no reader can hold it. */
void node_retire(struct dt_tree *t, struct dt_node *n)
{
	if (t->hint == n)
		t->hint = NULL;
	t->nodes--;
	t->node_bytes -= node_size(n->capacity);
	t->used_call_rcu = true;
	tsan_release();
	urcu_memb_call_rcu(&n->rcu, node_free_cb);
}

/*
 * Put @m, an empty node of another capacity, in the place of @n: copy @n's
 * slots and tags, move its children to it, publish it with one store into
 * the parent's slot (or the root), and retire @n.  A reader inside @n goes
 * on reading it as it was; one that comes later finds @m.
 */
struct dt_node *node_replace(struct dt_tree *t, struct dt_node *n, struct dt_node *m)
{
	bool hint = t->hint == n;

	m->parent = n->parent;
	m->offset = n->offset;
	for (unsigned tag = 0; tag < DT_TREE_MAX_TAGS; tag++)
		m->tags[tag] = tags_load(n, tag);
	for (uint64_t bits = used_load(n); bits; bits &= bits - 1) {
		unsigned off = (unsigned)__builtin_ctzll(bits);
		void *slot = slot_load(n, off);

		if (slot_is_node(slot))
			slot_to_node(slot)->parent = m;
		slot_store(m, off, slot);
	}
	if (m->parent)
		slot_store(m->parent, m->offset, node_link(m->parent, m));
	else
		root_store(t, m);
	node_retire(t, n);
	if (hint)
		t->hint = m;
	return m;
}

/*
 * After slots of @n emptied: a node that would fit a smaller kind at half
 * its capacity moves to it.  Best effort: without memory @n stays.
 */
struct dt_node *node_shrink(struct dt_tree *t, struct dt_node *n)
{
	unsigned count = node_count(n), capacity = kind_capacity(count * 2);
	struct dt_node *m;

	if (capacity >= n->capacity || !n->parent)
		return n;	/* the root stays as it is */
	m = node_alloc(t, capacity);
	if (!m)
		return n;
	return node_replace(t, n, node_init(t, m, n->shift, n->base));
}

/* Retire a detached subtree, leaving its contents as readers saw them. */
void subtree_retire(struct dt_tree *t, struct dt_node *n)
{
	for (uint64_t bits = used_load(n); bits; bits &= bits - 1) {
		void *slot = slot_load(n, (unsigned)__builtin_ctzll(bits));

		if (slot_is_node(slot))
			subtree_retire(t, slot_to_node(slot));
		else if (slot_is_leaf(slot))
			leaf_retire(t, slot_to_leaf(slot));
	}
	node_retire(t, n);
}

void subtree_free_now(struct dt_node *n)
{
	for (uint64_t bits = used_load(n); bits; bits &= bits - 1) {
		void *slot = slot_load(n, (unsigned)__builtin_ctzll(bits));

		if (slot_is_node(slot))
			subtree_free_now(slot_to_node(slot));
		else if (slot_is_leaf(slot))
			free(slot_to_leaf(slot));
	}
	free(n);
}
