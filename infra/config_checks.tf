# What the config file may not hold, refused before a deploy. The functions
# refuse the same when they load it (shared/config.py), but by then the file
# is in the source archive and its content in the Terraform state.
#
# A header given inline whose name speaks of a credential must come from
# Secret Manager (valueSecretRef) instead. A name speaks of one as
# is_credential_header in shared/config.py reads it (tests/infra/
# test_config_checks.py keeps the two equal): lower-cased, with everything
# but letters and digits dropped, it holds one of credential_name_words
# (X-Api-Key: "apikey"), or one of its words is in credential_name_parts
# (X-Auth, Ocp-Apim-Subscription-Key). Words are split at other characters
# and where the case changes (userPwd: "user", "pwd"; APIKey: "api", "key").
# This file reads nothing but local.config.

locals {
  credential_name_words = [
    "password", "passwd", "passphrase", "passcode", "secret", "token", "apikey", "accesskey",
    "accountkey", "privatekey", "clientkey", "masterkey", "encryptionkey", "sshkey", "keydata",
    "kubeconfig", "credential", "authorization", "cookie", "sessionid", "signingkey", "signature",
  ]
  credential_name_parts = ["auth", "key", "otp", "pass", "pat", "pin", "pwd", "sig"]

  inline_credential_headers = flatten([
    for backend in try(local.config.agentBackends, []) : [
      for header, value in try(backend.headers, {}) : "${try(backend.name, "?")}: ${header}"
      if can(tostring(value)) && (
        anytrue([
          for word in local.credential_name_words :
          strcontains(lower(replace(header, "/[^A-Za-z0-9]/", "")), word)
        ]) ||
        length(setintersection(toset(local.credential_name_parts), toset([
          for word in concat(
            regexall("[A-Za-z0-9]+", header),
            regexall("[A-Z]?[a-z]+", header),
            regexall("[A-Z]+", header),
            flatten(regexall("([A-Z]+)[A-Z][a-z]", header)),
          ) : lower(word)
        ]))) > 0
      )
    ]
  ])
}
