// What the signed-in caller may do in a tenant, so the UI offers only what
// the API would allow. The API decides: this only hides what it refuses.

const rank = { viewer: 1, operator: 2, editor: 3, admin: 4, owner: 5 };

/** roleIn is the caller's role in tenant: a member's role, "admin" for an admin key, "owner" for the operator. */
export function roleIn(me, tenant) {
  if (me.kind === 'platform') return 'owner';
  if (me.kind === 'key') return (me.key.scopes || []).includes('admin') ? 'admin' : 'chat';
  const t = (me.tenants || []).find((x) => x.slug === tenant);
  return t ? t.role : '';
}

/** atLeast reports whether role is need or stronger. */
export function atLeast(role, need) {
  return (rank[role] || 0) >= (rank[need] || 0);
}
