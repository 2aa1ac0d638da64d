import { z } from "zod";

// The names a tenant gives its tools, webhook connections and event subscriptions: they appear in
// URLs and logs, so lowercase ASCII, starting with a letter, at most 100 characters. One schema,
// so the rule and the message a person reads about it are the same everywhere.
export const lowercaseNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_.-]{0,99}$/, "use lowercase letters, digits and _ . - only, starting with a letter, at most 100 characters (^[a-z][a-z0-9_.-]{0,99}$)");
