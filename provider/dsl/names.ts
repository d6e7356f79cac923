/** Kubernetes name rules (RFC 1123), with messages that say what is allowed. */

export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function checkDnsSubdomain(value: string, what: string): string | undefined {
  if (value.length > 253) return `${what} "${value}" is ${value.length} characters; the limit is 253`;
  if (!DNS_SUBDOMAIN.test(value)) {
    return `${what} "${value}" is not a valid RFC 1123 subdomain: use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit`;
  }
  return undefined;
}
