/** Kubernetes name rules (RFC 1123), with messages that say what is allowed. */

export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Helm's release name limit, which step names inherit because a release defaults to the step name. */
export const MAX_STEP_NAME = 53;

export function checkDnsLabel(value: string, what: string, max = 63): string | undefined {
  if (value.length > max) return `${what} "${value}" is ${value.length} characters; the limit is ${max}`;
  if (!DNS_LABEL.test(value)) {
    return `${what} "${value}" is not a valid RFC 1123 label: use lowercase letters, digits and '-', starting and ending with a letter or digit`;
  }
  return undefined;
}

export function checkDnsSubdomain(value: string, what: string): string | undefined {
  if (value.length > 253) return `${what} "${value}" is ${value.length} characters; the limit is 253`;
  if (!DNS_SUBDOMAIN.test(value)) {
    return `${what} "${value}" is not a valid RFC 1123 subdomain: use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit`;
  }
  return undefined;
}
