// Console roles are capabilities, not a strict ladder: an approver decides approvals but
// does not settle unknown outcomes, an operator does the reverse; admin does everything.
export type UserRole = "viewer" | "operator" | "approver" | "admin";

export type Capability = "read" | "resolve" | "match-webhooks" | "decide-approvals" | "administer";

const grants: Record<UserRole, readonly Capability[]> = {
  viewer: ["read"],
  operator: ["read", "resolve", "match-webhooks"],
  approver: ["read", "decide-approvals"],
  admin: ["read", "resolve", "match-webhooks", "decide-approvals", "administer"],
};

export function can(role: UserRole, capability: Capability): boolean {
  return grants[role].includes(capability);
}

export const userRoles: readonly UserRole[] = ["viewer", "operator", "approver", "admin"];
