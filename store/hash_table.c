/* hash_table.c - big hashes: a store_dict whose nodes carry field and value
 * in one allocation. Table memory is charged to used_memory by diffing. */
#include "store_internal.h"

#include <string.h>

typedef struct hnode {
    store_dict_node n;    /* its key is data (htable_new's dict) */
    uint32_t vlen;
    char data[];          /* field bytes, then value bytes */
} hnode;

#define HNODE_HDR offsetof(hnode, data)

static hnode *hnode_of(store_dict_node *n) { return STORE_CONTAINER(n, hnode, n); }

store_dict *htable_new(store *s)
{
    store_dict *d = store_mem_alloc(&s->used_memory, sizeof(*d));
    store_dict_init(d, STORE_DICT_KEY_OFF(hnode, n, data), STORE_DICT_KEY_INLINE);
    return d;
}

const char *htable_get(const store_dict *d, const char *f, size_t flen, size_t *vlen)
{
    store_dict_node *n = store_dict_peek(d, f, flen);
    if (!n) return NULL;
    if (vlen) *vlen = hnode_of(n)->vlen;
    return hnode_of(n)->data + n->keylen;
}

static void write_value(hnode *h, const char *v, size_t vlen)
{
    if (vlen) memmove(h->data + h->n.keylen, v, vlen);
    h->vlen = (uint32_t)vlen;
}

static hnode *hnode_new(store *s, const char *f, size_t flen, uint64_t hash,
                        const char *v, size_t vlen)
{
    hnode *h = store_mem_alloc(&s->used_memory, HNODE_HDR + flen + vlen);
    if (flen) memcpy(h->data, f, flen);
    h->n.next = NULL;
    h->n.hash = hash;
    h->n.keylen = store_dict_keylen(flen);
    write_value(h, v, vlen);
    return h;
}

/* In place when it fits without wasting most of the node; otherwise the
 * node moves, so it leaves the dict and comes back at its new address. */
static void update_value(store *s, store_dict *d, hnode *h, const char *v, size_t vlen)
{
    size_t need = HNODE_HDR + h->n.keylen + vlen, cap = store_mem_size(h);
    if (need <= cap && need * 2 >= cap) {
        write_value(h, v, vlen);
        return;
    }
    hnode *nh = hnode_new(s, h->data, h->n.keylen, h->n.hash, v, vlen);
    store_dict_unlink(d, &h->n);
    store_mem_free(&s->used_memory, h);
    store_dict_insert_hashed(d, &nh->n);
}

int htable_set(store *s, store_dict *d, const char *f, size_t flen,
               const char *v, size_t vlen)
{
    size_t before = store_dict_mem(d);
    uint64_t hash = store_dict_hash(f, flen);
    store_dict_node *n = store_dict_find_hashed(d, f, flen, hash);
    if (n)
        update_value(s, d, hnode_of(n), v, vlen);
    else
        store_dict_insert_hashed(d, &hnode_new(s, f, flen, hash, v, vlen)->n);
    store_charge_dict(s, d, before);
    return n == NULL;
}

int htable_del(store *s, store_dict *d, const char *f, size_t flen)
{
    size_t before = store_dict_mem(d);
    store_dict_node *n = store_dict_remove(d, f, flen);
    if (n) store_mem_free(&s->used_memory, hnode_of(n));
    store_charge_dict(s, d, before);
    return n != NULL;
}

struct field_visit {
    store_field_fn fn;
    void *ctx;
};

static void visit_field(store_dict_node *n, void *ctx)
{
    struct field_visit *fv = ctx;
    const hnode *h = hnode_of(n);
    fv->fn(h->data, n->keylen, h->data + n->keylen, h->vlen, fv->ctx);
}

void htable_random(store_dict *d, uint64_t rnd, store_field_fn fn, void *ctx)
{
    struct field_visit fv = { fn, ctx };
    store_dict_node *n = store_dict_random(d, rnd);
    if (n) visit_field(n, &fv);
}

uint64_t htable_scan(store_dict *d, uint64_t cursor, store_field_fn fn, void *ctx)
{
    struct field_visit fv = { fn, ctx };
    return store_dict_scan(d, cursor, visit_field, &fv);
}

void htable_foreach(const store_dict *d, store_field_fn fn, void *ctx)
{
    struct field_visit fv = { fn, ctx };
    /* foreach only bumps the iterator count; the dict itself is heap. */
    store_dict_foreach((store_dict *)d, visit_field, &fv);
}

static void free_hnode(store_dict_node *n, void *ctx)
{
    store *s = ctx;
    store_mem_free(&s->used_memory, hnode_of(n));
}

void htable_free(store *s, store_dict *d)
{
    size_t before = store_dict_mem(d);
    store_dict_clear(d, free_hnode, s);
    store_charge_dict(s, d, before);
    store_mem_free(&s->used_memory, d);
}
