/**
 * Every failure the loader fuzz found, kept with its exact input (as the fuzzer shrank it) and run by
 * test/unit/loader-fuzz.test.ts. `issue10` marks a case that belongs to issue 10's items, which
 * other branches fix: the test runs it as a todo until their fix lands, then the mark goes.
 */
import type { LoaderInput } from "./inputs.js";

export interface LoaderRegression {
  /** What went wrong, as the fuzzer reported it. */
  finding: string;
  /** How it was found: seed and date. */
  found: string;
  issue10?: string;
  input: LoaderInput;
  /** Text validate's message must hold, where passing the invariants alone would not show the fix. */
  reports?: string;
}

export const LOADER_REGRESSIONS: readonly LoaderRegression[] = [
  {
    finding:
      "validate -o json (problems as JSON, issue 10 item 21) JSON-escaped a public backslash-quote in a pipeline message into text that holds one line of a multi-line secret (backslash, backslash, quote): a false leak of the check, not of khook (the secret is never referenced); the check now exempts forms that the public input yields when JSON-escaped",
    found: "seed 166882564, 2026-11-23",
    input: {
      kind: "template",
      spec: 'apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: $${HOME}\ndefaults:\n  timeout: ${APP}\nstate: {}\nsteps:\n  - name: config\n    apply:\n      namespace: $${HOME}\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata:\n              name: settings-\n            data:\n              key: ${APP:- | printf "%s-x" | ( | trunc 0}\n              quoted: "${APP}"\n  - name: chart\n    needs: [config]\n    when: \'vars.get("ENV", "dev") != "${APP}"\'\n    helm:\n      chart: hello\n      repo: https://charts.example.com\n      version: ""\n      values:\n        token: $${HOME}\n  - name: job\n    needs: [chart]\n    job:\n      image: busybox:${APP}\n      args: ["echo", "$${HOME}"]\n      env:\n        TOKEN: \n',
      env: { KHOOK_SECRET_TOKEN: '\\\\"\naaaa' },
      set: [],
    },
  },
  {
    finding:
      "a `${` left open swallowed the next lines into an 'invalid variable reference' message that printed them raw, so one problem spanned several lines of the problem list",
    found: "seed 1 (and 2-5), 2026-11-23",
    input: {
      kind: "template",
      spec: 'apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: ${APP}\ndefaults:\n  timeout: \nstate: {}\nsteps:\n  - name: config\n    apply:\n      namespace: ${APP}\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata:\n              name: settings-$${HOME}\n            data:\n              key: ${APP}\n              quoted: "$${HOME}"\n  - name: chart\n    needs: [config]\n    when: \'vars.get("ENV", "dev") != "0"\'\n    helm:\n      chart: hello\n      repo: https://charts.example.com\n      version: "${APP}"\n      values:\n        token: ${\n  - name: job\n    needs: [chart]\n    job:\n      image: busybox:\n      args: ["echo", "0"]\n      env:\n        TOKEN: ${APP}\n',
      env: {},
      set: [],
    },
  },
  {
    finding:
      "`wait.for:` left empty (null) crashed the loader with \"Cannot read properties of null (reading 'trim')\" (exit 1): the schema left the type error to the semantic rule, which assumed a string",
    found: "seed 1, 2026-11-23",
    input: {
      kind: "mutated-example",
      spec: "# yaml-language-server: $schema=https://khook.io/schema/v1/khook.json\n#\n# wait: — block until a condition holds (kubectl wait). The step timeout bounds it.\n# for: condition=<Name>[=<value>], jsonpath=<expr>[=<value>] or delete.\napiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: wait-example\ndefaults:\n  timeout: 5m\nsteps:\n  # Every node Ready.\n  - name: nodes-ready\n    timeout: 15m\n    wait:\n      for: condition=Ready\n      on: nodes\n\n  # All pods everywhere Ready.\n  - name: pods-ready\n    needs: [nodes-ready]\n    wait:\n      for: condition=Ready\n      on: pods\n      allNamespaces: true\n\n  # A field value, on one named object.\n  - name: coredns-replicas\n    needs: [nodes-ready]\n    wait:\n      for: jsonpath={.status.readyReplicas}=2\n      on: deployment/coredns\n      namespace: kube-system\n\n  # A condition with an explicit value.\n  - name: no-pressure\n    needs: [nodes-ready]\n    wait:\n      for: condition=MemoryPressure=False\n      on: nodes\n      selector: node-role.kubernetes.io/worker\n\n  # Filters contain '=', so they need the braced jsonpath form.\n  - name: argocd-server-ready\n    wait:\n      for: jsonpath={.status.conditions[?(@.type==\"Available\")].status}=True\n      on: deployment/argocd-server\n      namespace: argocd\n\n  # Until matching resources are gone.\n  - name: old-pods-gone\n    wait:\n      for: \n      on: pods\n      namespace: kube-system\n      selector: k8s-app=aws-node\n      fieldSelector: status.phase=Running\n",
      env: {},
      set: [],
    },
  },
  {
    finding:
      "a multi-line secret substituted into YAML leaked its first line through the YAML error that quoted the substituted text",
    found: "seed 2, 2026-11-23",
    input: {
      kind: "mutated-example",
      spec: '# yaml-language-server: $schema=https://khook.io/schema/v1/khook.json\n#\n# A realistic platform bootstrap: ingress, TLS, secrets tooling and a GitOps\n# controller that takes over from here. Each piece waits for what it needs.\n#\n#   khook plan  -f examples/bootstrap.khook.yaml --set ENV=prod\n#   khook apply -f examples/bootstrap.khook.yaml --set ENV=prod --set ACME_EMAIL=ops@example.com\n#\n# Toggles (all optional; every variable value is a string):\n#   ENV                      dev | prod  (prod uses the Let\'s Encrypt production endpoint)\n#   ENABLE_EXTERNAL_SECRETS  "true" (default) | "false"\n#   ENABLE_ARGOCD            "true" (default) | "false"\n#   GITOPS_REPO, GITOPS_REVISION   what Argo CD\'s root Application tracks\n#   USE_STATE                "true" (default): resume re-runs from the state record\napiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: platform-bootstrap\ndefaults:\n  timeout: 10m\n  retries: 1\n  retryDelay: 20s\n  onError: fail\nstate:\n  enabled: ${USE_STATE:-true}\n  namespace: kube-system # record Secret: kube-system/khook-state-platform-bootstrap\nsteps:\n  # --- ingress -------------------------------------------------------------\n  - name: ingress-nginx\n    helm:\n      chart: ingress-nginx\n      repo: https://kubernetes.github.io/ingress-nginx\n      version: "4.13.3"\n      namespace: ingress-nginx\n      createNamespace: true\n      atomic: true\n      wait: true\n      valuesFrom:\n        - file: ./values/ingress-nginx.yaml\n      values:\n        controller:\n          replicaCount: ${INGRESS_REPLICAS:-2}\n\n  # --- TLS: cert-manager with its CRDs, then a ClusterIssuer -----------------\n  - name: cert-manager\n    helm:\n      chart: cert-manager\n      repo: https://charts.jetstack.io\n      version: v1.19.1\n      namespace: cert-manager\n      createNamespace: true\n      atomic: true\n      wait: true\n      values:\n        crds:\n          enabled: true # the chart installs and upgrades the CRDs\n        prometheus:\n          enabled: false\n\n  # The webhook must answer before any cert-manager resource can be created.\n  - name: cert-manager-webhook-ready\n    needs: [cert-manager]\n    wait:\n      for: condition=Available\n      on: deployment/cert-manager-webhook\n      namespace: cert-manager\n\n  # Apply the issuer and block until cert-manager reports it Ready (ACME account registered).\n  - name: cluster-issuer\n    needs: [cert-manager-webhook-ready, ingress-nginx]\n    timeout: 5m\n    apply:\n      waitFor: condition=Ready\n      manifests:\n        - inline: |\n            apiVersion: cert-manager.io/v1\n            kind: ClusterIssuer\n            metadata:\n              name: letsencrypt\n            spec:\n              acme:\n                email: ${ACME_EMAIL:-platform@example.com}\n                server: https://acme-staging-v02.api.letsencrypt.org/directory\n                privateKeySecretRef:\n                  name: letsencrypt-account-key\n                solvers:\n                  - http01:\n                      ingress:\n                        ingressClassName: nginx\n\n  # Production gets the real endpoint; the same object, re-applied.\n  - name: cluster-issuer-prod\n    needs: [cluster-issuer]\n    when: vars.get("ENV", "dev") == "prod"\n    patch:\n      target: clusterissuer/letsencrypt\n      type: merge # merge: ClusterIssuer is a custom resource\n      patch:\n        spec:\n          acme:\n            server: https://acme-v02.api.letsencrypt.org/directory\n\n  # --- secrets tooling -------------------------------------------------------\n  - name: external-secrets\n    when: vars.get("ENABLE_EXTERNAL_SECRETS", "true") == "true"\n    helm:\n      chart: external-secrets\n      repo: https://charts.external-secrets.io\n      version: "0.20.4"\n      namespace: external-secrets\n      createNamespace: true\n      atomic: true\n      wait: true\n      values:\n        installCRDs: true\n\n  - name: external-secrets-webhook-ready\n    needs: [external-secrets]\n    when: vars.get("ENABLE_EXTERNAL_SECRETS", "true") == "true"\n    wait:\n      for: condition=Available\n      on: deployment/external-secrets-webhook\n      namespace: external-secrets\n\n  # --- GitOps: Argo CD takes over everything that is not bootstrap -------------\n  - name: argocd\n    needs: [ingress-nginx, cluster-issuer]\n    when: vars.get("ENABLE_ARGOCD", "true") == "true"\n    timeout: 15m\n    helm:\n      chart: argo-cd\n      repo: https://argoproj.github.io/argo-helm\n      version: "8.6.4"\n      namespace: argocd\n      createNamespace: true\n      atomic: true\n      valuesFrom:\n        - file: ./values/argocd.yaml\n      values:\n        server:\n          replicas: ${ARGOCD_SERVER_REPLICAS:-1}\n\n  - name: argocd-server-ready\n    needs: [argocd]\n    when: vars.get("ENABLE_ARGOCD", "true") == "true"\n    wait:\n      for: condition=Available\n      on: deployment/argocd-server\n      namespace: argocd\n\n  # The app-of-apps: from here on, Argo CD reconciles the platform from Git.\n  - name: argocd-root-app\n    needs: [argocd-server-ready]\n    when: vars.get("ENABLE_ARGOCD", "true") == "true"\n    apply:\n      namespace: argocd\n      skipIf: exists # Argo CD owns it after the first run\n      manifests:\n        - inline: |\n            apiVersion: argoproj.io/v1alpha1\n            kind: Application\n            metadata:\n              name: platform\n              finalizers:\n                - resources-finalizer.argocd.argoproj.io\n            spec:\n              project: default\n              source:\n                repoURL: ${GITOPS_REPO:-https://github.com/example/platform-gitops.git}\n                targetRevision: ${GITOPS_REVISION:-main}\n                path: clusters/${ENV:-dev}\n              destination:\n                server: https://kubernetes.default.svc\n                namespace: argocd\n              syncPolicy:\n                automated:\n                  prune: true\n                  selfHeal: true\n\n  # --- smoke test ----------------------------------------------------------------\n  # The ingress controller answers: no Ingress matches, so its default backend says 404.\n  - name: ingress-smoke-test\n    needs: [ingress-nginx]\n    retries: 3\n    retryDelay: 15s\n    job:\n      image: curlimages/curl:8.16.0\n      command: ["sh", "-c"]\n      args:\n        - >-\n          code=$(curl -s -o /dev/null -w \'%{http_code}\' http://ingress-nginx-controller.ingress-nginx.svc.cluster.local/healthz-probe);\n          echo "ingress answered $code"; test "$code" = 404\n      namespace: ingress-nginx\n      skipIf: succeeded\n',
      env: {
        KHOOK_VAR_USE_STATE: "}",
        KHOOK_SECRET_GITOPS_REPO: "aaaaaaaa\na",
      },
      set: [],
    },
  },
  {
    finding:
      "a document that js-yaml reads as a scalar but the positioned parser rejects (a tab before it) got a problem with no line",
    found: "seed 3, 2026-11-23",
    input: {
      kind: "random-yaml",
      spec: "\ta",
      env: {},
      set: [],
    },
  },
  {
    finding:
      "a variable value `*` made `*m`, an alias with no anchor: reported as an alias bomb ('expand beyond the limit'), before that a crash (exit 1)",
    found: "seed 4, 2026-11-23",
    reports: "fuzz.khook.yaml:23:12: YAML: alias *m has no anchor &m before it",
    input: {
      kind: "mutated-example",
      spec: '# yaml-language-server: $schema=https://khook.io/schema/v1/khook.json\n#\n# Every variable source, by precedence (highest first):\n#   --set NAME=value            ENV          khook plan ... --set ENV=staging\n#   --var-file vars.yaml        APP, REGION, REPLICAS   (examples/vars/variables.vars.yaml)\n#   KHOOK_SECRET_<NAME> env     TOKEN        export KHOOK_SECRET_TOKEN=s3cr3t   (redacted in all output)\n#   KHOOK_VAR_<NAME> env        TEAM         export KHOOK_VAR_TEAM=payments\n#   :-default in the spec       TEAM, ENV, WINDOW, RETRIES, LOG_LEVEL\n#\n#   KHOOK_SECRET_TOKEN=s3cr3t KHOOK_VAR_TEAM=payments \\\n#     khook plan -f examples/variables.khook.yaml \\\n#       --var-file examples/vars/variables.vars.yaml --set ENV=staging\n#\n# Substitution is textual and happens before YAML parsing, so a variable can hold\n# any scalar (defaults.retries below becomes a number). A reference may pipe its value\n# through sprig functions; a :-default applies first, then the pipeline.\n# To write a literal dollar-brace (for a shell), double the dollar: $${HOME}.\napiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: variables-example\ndefaults:\n  timeout: ${WINDOW:-5|printf "%sm"} # default first, then the pipe: 5m\n  retries: ${RETRIES:-1}\nsteps:\n  - name: app-namespace\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: Namespace\n            metadata:\n              name: ${APP|lower|trunc 63}\n              labels:\n                app.kubernetes.io/part-of: ${APP|lower|trunc 63}\n                example.com/env: ${ENV:-dev}\n                example.com/team: ${TEAM:-platform}\n\n  - name: app-secret\n    needs: [app-namespace]\n    apply:\n      namespace: ${APP|lower|trunc 63}\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: Secret\n            metadata:\n              name: api-token\n            type: Opaque\n            data:\n              token: ${TOKEN|b64enc}\n            stringData:\n              region: ${REGION}\n              logLevel: ${LOG_LEVEL:-info|upper}\n\n  - name: app-config\n    needs: [app-namespace]\n    apply:\n      namespace: ${APP|lower|trunc 63}\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata:\n              name: app-config\n            data:\n              replicas: "${REPLICAS}"\n              environment: ${ENV:-dev|quote}\n\n  # Conditions read the merged variables as strings: vars.NAME, vars.get(...), has(...).\n  - name: greet\n    needs: [app-secret, app-config]\n    when: vars.get("ENV", "dev") != "prod" && has(vars.REGION)\n    job:\n      image: busybox:1.37\n      namespace: ${APP|lower|trunc 63}\n      command: ["sh", "-c"]\n      # khook substitutes the app name; $${GREETING:-hello} reaches the shell as a literal\n      # dollar-brace expression, expanded in the container from env:.\n      args: [\'echo "$${GREETING:-hello} from ${APP|lower} in $${REGION}"\']\n      env:\n        GREETING: hi\n        REGION: ${REGION}\n',
      env: {
        KHOOK_VAR_WINDOW: "*",
        KHOOK_VAR_TOKEN: "",
        KHOOK_VAR_APP: "0",
        KHOOK_VAR_REGION: "0",
      },
      set: ["REPLICAS="],
    },
  },
  {
    finding:
      "a spec that is YAML `null` crashed the loader with \"Cannot read properties of null (reading 'hooks')\" (exit 1)",
    found: "seed 7, 2026-11-23",
    input: {
      kind: "random-yaml",
      spec: "null\n",
      env: {},
      set: [],
    },
  },
  {
    finding:
      "a secret that the YAML parser split into tokens (`}aaaaaaaa`) leaked its tail through 'Unexpected scalar token in YAML stream: \"aaaaaaaa\"'",
    found: "seed 10, 2026-11-23",
    reports: "YAML: the value of secret variable NAMESPACE breaks the YAML here",
    input: {
      kind: "mutated-example",
      spec: '# yaml-language-server: $schema=https://khook.io/schema/v1/khook.json\n#\n# The KUDO MySQL operator\'s `deploy` plan (seed 001: steps deploy, init, cleanup),\n# expressed as a khook spec. docs/kudo.md explains each mapping and where KUDO and\n# khook differ.\n#\n#   KUDO                                   khook\n#   plan "deploy"                          this spec (one spec per plan)\n#   step (serial)                          steps chained with needs:\n#   task (parallel within a step)          one apply: step per task; sibling tasks share the same needs:\n#   params.yaml: password (default)        ${PASSWORD:-password} (set KHOOK_SECRET_PASSWORD in real use)\n#   templates/*.yaml                       manifests: files; the parameterized one is inline\n#   step "cleanup", delete: true           a delete: step with the init task\'s manifests\n#   execution state (PlanExecution)        state: {} (the journal; khook status shows it)\napiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: kudo-mysql\nstate: {}\ndefaults:\n  timeout: 10m\nsteps:\n  # KUDO step "deploy", task "deploy": deployment.yaml, pvc.yaml and service.yaml,\n  # applied together. The credentials Secret carries the `password` parameter; the\n  # templates reference it by name, so they stay plain files.\n  - name: deploy\n    apply:\n      namespace: ${NAMESPACE:-mysql}\n      createNamespace: true\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: Secret\n            metadata:\n              name: mysql-credentials\n              labels: {app: mysql}\n            stringData:\n              password: ${PASSWORD:-password}\n        - file: ./kudo-mysql/templates/pvc.yaml\n        - file: ./kudo-mysql/templates/deployment.yaml\n        - file: ./kudo-mysql/templates/service.yaml\n\n  # KUDO waits for a step\'s runnable tasks to be ready before the next step.\n  - name: deploy-ready\n    needs: [deploy]\n    wait:\n      for: condition=Available\n      on: deployment/mysql\n      namespace: ${NAMESPACE:-mysql}\n\n  # KUDO step "init", task "init": the schema job, applied and waited for.\n  - name: init\n    needs: [deploy-ready]\n    apply:\n      namespace: ${NAMESPACE:-mysql}\n      waitFor: condition=Complete\n      manifests:\n        - file: ./kudo-mysql/templates/init.yaml\n\n  # KUDO step "cleanup": tasks [init] with delete: true removes what the init task applied.\n  - name: cleanup\n    needs: [init]\n    delete:\n      namespace: ${NAMESPACE:-mysql}\n      manifests:\n        - file: ./kudo-mysql/templates/init.yaml\n',
      env: {
        KHOOK_SECRET_NAMESPACE: "}aaaaaaaa",
      },
      set: [],
    },
  },
  {
    finding: "a secret starting with a newline leaked its second line through a YAML error that quoted the token",
    found: "seed 2654435781, 2026-11-23",
    input: {
      kind: "mutated-example",
      spec: '# yaml-language-server: $schema=https://khook.io/schema/v1/khook.json\n#\n# The KUDO MySQL operator\'s `deploy` plan (seed 001: steps deploy, init, cleanup),\n# expressed as a khook spec. docs/kudo.md explains each mapping and where KUDO and\n# khook differ.\n#\n#   KUDO                                   khook\n#   plan "deploy"                          this spec (one spec per plan)\n#   step (serial)                          steps chained with needs:\n#   task (parallel within a step)          one apply: step per task; sibling tasks share the same needs:\n#   params.yaml: password (default)        ${PASSWORD:-password} (set KHOOK_SECRET_PASSWORD in real use)\n#   templates/*.yaml                       manifests: files; the parameterized one is inline\n#   step "cleanup", delete: true           a delete: step with the init task\'s manifests\n#   execution state (PlanExecution)        state: {} (the journal; khook status shows it)\napiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: kudo-mysql\nstate: {}\ndefaults:\n  timeout: 10m\nsteps:\n  # KUDO step "deploy", task "deploy": deployment.yaml, pvc.yaml and service.yaml,\n  # applied together. The credentials Secret carries the `password` parameter; the\n  # templates reference it by name, so they stay plain files.\n  - name: deploy\n    apply:\n      namespace: ${NAMESPACE:-mysql}\n      createNamespace: true\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: Secret\n            metadata:\n              name: mysql-credentials\n              labels: {app: mysql}\n            stringData:\n              password: ${PASSWORD:-password}\n        - file: ./kudo-mysql/templates/pvc.yaml\n        - file: ./kudo-mysql/templates/deployment.yaml\n        - file: ./kudo-mysql/templates/service.yaml\n\n  # KUDO waits for a step\'s runnable tasks to be ready before the next step.\n  - name: deploy-ready\n    needs: [deploy]\n    wait:\n      for: condition=Available\n      on: deployment/mysql\n      namespace: ${NAMESPACE:-mysql}\n\n  # KUDO step "init", task "init": the schema job, applied and waited for.\n  - name: init\n    needs: [deploy-ready]\n    apply:\n      namespace: ${NAMESPACE:-mysql}\n      waitFor: condition=Complete\n      manifests:\n        - file: ./kudo-mysql/templates/init.yaml\n\n  # KUDO step "cleanup": tasks [init] with delete: true removes what the init task applied.\n  - name: cleanup\n    needs: [init]\n    delete:\n      namespace: ${NAMESPACE:-mysql}\n      manifests:\n        - file: ./kudo-mysql/templates/init.yaml\n',
      env: {
        KHOOK_SECRET_PASSWORD: "\na\\aaaaaaa",
      },
      set: [],
    },
  },
  {
    finding:
      "a secret substituted into a mapping key showed up unmasked in the problem's JSON-pointer path (the message was masked, the path was not)",
    found: "seed 24 (and 1013904255, 3668340032), 2026-11-23",
    input: {
      kind: "random-yaml",
      spec: "${S}: ",
      env: {
        KHOOK_SECRET_S: "s3cr3t-token",
      },
      set: [],
    },
  },
  {
    finding:
      'a false alarm of the check itself: a 3-character line of a multi-line secret (`\\"|`) matched the JSON escaping of an unrelated message; lines of a secret now count from 8 characters, like fragments',
    found: "seed 1712415800 (./dev fuzz, after 20,310 inputs), 2026-11-23",
    input: {
      kind: "template",
      spec: 'apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: ${APP}\ndefaults:\n  timeout: \nstate: {}\nsteps:\n  - name: config\n    apply:\n      namespace: \n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata:\n              name: settings-0\n            data:\n              key: ${APP}\n              quoted: "${APP}"\n  - name: chart\n    needs: [config]\n    when: \'vars.get("ENV", "dev") != "${APP}"\'\n    helm:\n      chart: hello\n      repo: https://charts.example.com\n      version: "${APP}"\n      values:\n        token: ${APP}\n  - name: job\n    needs: [chart]\n    job:\n      image: busybox:${APP}\n      args: ["echo", "${APP:-| | indent 0}"]\n      env:\n        TOKEN: ${APP}\n',
      env: {
        KHOOK_SECRET_TOKEN: 'aa\n\\"|',
      },
      set: [],
    },
  },
  {
    finding:
      "a secret with surrounding whitespace, substituted into a plain YAML scalar, loses it there, and a message quoting the parsed value (an invalid namespace) showed the trimmed secret unmasked: the redactor masked only the untrimmed forms",
    found: "seed 186699185 (the suite's seed for commit 0b20cdb), 2026-11-27",
    input: {
      kind: "template",
      spec: "apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: ns\nsteps:\n  - name: config\n    apply:\n      namespace: ${NAMESPACE:-mysql}\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: ConfigMap\n            metadata: {name: settings}\n",
      env: { KHOOK_SECRET_NAMESPACE: " aaaaaaa\\" },
      set: [],
    },
    reports: "is not a valid namespace",
  },
  {
    finding:
      "a secret substituted into an inline manifest broke its YAML, and the parser's message quoted the piece it tripped on (`Block scalar header includes extra characters: |aaaaaaa`): a fragment, which the redactor's whole forms did not match; load-time problems now mask any 8-character run of a secret",
    found: "seed 513834580 (./dev fuzz), 2026-11-27",
    input: {
      kind: "template",
      spec: "apiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: pw\nsteps:\n  - name: config\n    apply:\n      manifests:\n        - inline: |\n            apiVersion: v1\n            kind: Secret\n            metadata: {name: creds}\n            stringData:\n              password: ${PASSWORD:-password}\n",
      env: { KHOOK_SECRET_PASSWORD: "|aaaaaaa#aaaaaa" },
      set: [],
    },
    reports: "is not valid YAML",
  },
  {
    finding:
      "a helm step whose name was left empty (`name:`, YAML null) crashed the loader with \"Cannot read properties of null (reading 'length')\" (exit 1): the helm kind's release-name rule took the name for a string, and a wrong name alone does not keep a step's kind rules from running",
    found: "seed 1606713985 (CI, per-commit seed), 2026-11-28",
    input: {
      kind: "mutated-example",
      spec: "# yaml-language-server: $schema=https://khook.io/schema/v1/khook.json\napiVersion: khook.io/v1\nkind: Khook\nmetadata:\n  name: bootstrap\nstate: {}                       # journal the run in a Secret; re-runs resume\nsteps:\n  - name: \n    helm:\n      chart: cert-manager\n      repo: ${CHART_MIRROR:-https://charts.jetstack.io}   # a closed network: --set CHART_MIRROR=<your mirror>\n      version: v1.21.2\n      namespace: cert-manager\n      createNamespace: true\n      values: { crds: { enabled: true } }\n  - name: issuer\n    needs: [cert-manager]\n    apply:\n      waitFor: condition=Ready\n      manifests:\n        - file: ./manifests/cluster-issuer.yaml\n",
      env: {},
      set: [],
    },
    reports: "/steps/0/name: name must be a string",
  },
];
