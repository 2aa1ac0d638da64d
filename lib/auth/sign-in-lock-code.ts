// What the sign-in form is told when an email is locked after too many failed sign-ins
// (lib/auth/sign-in-throttle.ts): next-auth passes an error thrown in authorize on as its code.
// A module of its own, so the browser's form can import it without the database code.
export const SIGN_IN_LOCKED = "TooManyFailedSignIns";

// What it is told when checking the password failed for another reason (the database, say).
export const SIGN_IN_UNAVAILABLE = "SignInUnavailable";
