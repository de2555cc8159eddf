package redact

import (
	"strings"
	"testing"
)

// heldOut are contexts written by hand, in words the generator (package
// casegen) does not use: other languages, other tools, other file
// formats. They check that the redactor learnt contexts rather than the
// generator's cases, and are scored as the generated set is (strict
// recall, false positives). They were written before the redactor was run
// on them: it first caught 65.0% (26/40) of their secrets, with no false
// positive in 25 negatives. What it missed asked for mechanisms, not
// cases (name/value pairs, the password flags of tools, SQL and Redis
// passwords, Markdown table rows, credential tuples, commands that set a
// named setting), which brought it to 39/40; the miss left is a 40-hex
// value under a weak "KEY" name, which looks as much like a digest.
var heldOut = []struct {
	name, text string
	secrets    []string // must not survive (strict)
	keep       []string // must survive
}{
	// Positives.
	{"ansible become pass", "all:\n  vars:\n    ansible_user: deploy\n    ansible_become_pass: Tq9!vLw3#Rz\n", []string{"Tq9!vLw3#Rz"}, []string{"ansible_user: deploy"}},
	{"helm values", "postgresql:\n  auth:\n    username: app\n    password: \"mX7#kP2q9Lw\"\n    database: orders\n", []string{"mX7#kP2q9Lw"}, []string{"database: orders"}},
	{"gha hardcoded env", "jobs:\n  build:\n    env:\n      NPM_TOKEN: 8f14e45fceea167a5a36dedd4bea2543\n    steps:\n      - run: npm ci\n", []string{"8f14e45fceea167a5a36dedd4bea2543"}, []string{"npm ci"}},
	{"systemd environment", "[Service]\nEnvironment=\"API_TOKEN=Zk4qT8wPq1Xv7Nc2Rb9Lm3Hs\"\nExecStart=/usr/bin/api\n", []string{"Zk4qT8wPq1Xv7Nc2Rb9Lm3Hs"}, []string{"ExecStart=/usr/bin/api"}},
	{"nginx header", "location /api/ {\n    proxy_set_header Authorization \"Bearer 4f9a1c2e8b7d6a5f3e2c1b0a9d8e7f6a5b4c3d2e\";\n}\n", []string{"4f9a1c2e8b7d6a5f3e2c1b0a9d8e7f6a5b4c3d2e"}, []string{"proxy_set_header Authorization"}},
	{"php config array", "<?php\n$config['db_password'] = 'r8Tq#mW2zL5v';\n$config['db_host'] = 'localhost';\n", []string{"r8Tq#mW2zL5v"}, []string{"$config['db_host'] = 'localhost';"}},
	{"wordpress define", "define( 'AUTH_KEY', 'Xq/3r|]v9(Lk*0Zb#Wm2^Tc7!Yp5@Ns8&Hd1%Gf4+Jx6' );\ndefine( 'WP_DEBUG', false );", []string{"Xq/3r|]v9(Lk*0Zb#Wm2^Tc7!Yp5@Ns8&Hd1%Gf4+Jx6"}, []string{"WP_DEBUG"}},
	{"java constant", "public class Billing {\n    private static final String API_KEY = \"a7Bc9Dq2Ef5Gh8Jk1Lm4Np7Qr0\";\n}\n", []string{"a7Bc9Dq2Ef5Gh8Jk1Lm4Np7Qr0"}, []string{"public class Billing"}},
	{"rust let", "let client_secret = \"Wm8zRq3Tk9Lp2Vx5Bn7Cd4Fg\";\nlet url = \"https://api.example.org\";", []string{"Wm8zRq3Tk9Lp2Vx5Bn7Cd4Fg"}, []string{"https://api.example.org"}},
	{"powershell env", "$env:STORAGE_KEY = \"Qm9yZSByYW5kb20gYnl0ZXMgaGVyZSBmb3IgYSBrZXk4Mg==\"\nWrite-Host done", []string{"Qm9yZSByYW5kb20gYnl0ZXMgaGVyZSBmb3IgYSBrZXk4Mg=="}, []string{"Write-Host done"}},
	{"powershell securestring", "$pw = ConvertTo-SecureString \"Hq7!pX2m#Kw9\" -AsPlainText -Force", []string{"Hq7!pX2m#Kw9"}, []string{"ConvertTo-SecureString"}},
	{"windows set", "C:\\app> set DB_PASSWORD=Lw4#tQ9z!Rm2\nC:\\app> run.bat", []string{"Lw4#tQ9z!Rm2"}, []string{"run.bat"}},
	{"setx", "setx OPENROUTER_KEY 7c4a8d09ca3762af61e59520943dc26494f8941b\n", []string{"7c4a8d09ca3762af61e59520943dc26494f8941b"}, nil},
	{"pypirc", "[pypi]\nusername = __token__\npassword = Tk8mQ2wZ9xLp4Rv7Nb3Cs6Yd\n", []string{"Tk8mQ2wZ9xLp4Rv7Nb3Cs6Yd"}, []string{"username = __token__"}},
	{"netrc one line", "machine api.heroku.com login dev@acme.io password 0b4a6c1e-7f2d-4e9a-b3c5-1d8e2f7a6b90", []string{"0b4a6c1e-7f2d-4e9a-b3c5-1d8e2f7a6b90"}, []string{"machine api.heroku.com"}},
	{"git credential store", "https://deploy-bot:Pz3#qW8x!Lm5@git.example.com\n", []string{"Pz3#qW8x!Lm5"}, []string{"git.example.com"}},
	{"sql create user", "CREATE USER reporting WITH PASSWORD 'kV9#mT2q!Zx7';\nGRANT SELECT ON ALL TABLES TO reporting;", []string{"kV9#mT2q!Zx7"}, []string{"GRANT SELECT"}},
	{"sql identified by", "ALTER USER 'app'@'%' IDENTIFIED BY 'Rq2!wX8z#Lm4';", []string{"Rq2!wX8z#Lm4"}, []string{"ALTER USER"}},
	{"redis auth", "127.0.0.1:6379> AUTH nW7qR2zX9mL4tK8p\nOK\n127.0.0.1:6379> CONFIG SET requirepass Ys5#kQ1w!Tm8\nOK", []string{"nW7qR2zX9mL4tK8p", "Ys5#kQ1w!Tm8"}, []string{"127.0.0.1:6379"}},
	{"notebook cell", `{"cell_type": "code", "source": ["import os\n", "os.environ[\"COHERE_API_KEY\"] = \"Bq8zW3mK9xT2pL7vR4nC6sY1\"\n"]}`, []string{"Bq8zW3mK9xT2pL7vR4nC6sY1"}, []string{`"cell_type": "code"`}},
	{"markdown table", "| Variable | Value |\n|---|---|\n| SMTP_PASSWORD | Gm4!kQ9z#Wt2 |\n| SMTP_HOST | mail.acme.io |\n", []string{"Gm4!kQ9z#Wt2"}, []string{"mail.acme.io"}},
	{"cookie header", "Cookie: sessionid=p9xq2w7zk3m8t4rl6vb1nc5yd0; theme=dark\n", []string{"p9xq2w7zk3m8t4rl6vb1nc5yd0"}, []string{"theme=dark"}},
	{"set-cookie", "Set-Cookie: __Host-session=Fz8qK2mW9xR4tL7pV3nB6cY1sD5; Path=/; Secure; HttpOnly\n", []string{"Fz8qK2mW9xR4tL7pV3nB6cY1sD5"}, []string{"Path=/; Secure; HttpOnly"}},
	{"prose", "fyi the prod db password is Vh3#qZ8m!Kw2 — rotate it after the demo", []string{"Vh3#qZ8m!Kw2"}, []string{"rotate it after the demo"}},
	{"kotlin val", "val apiSecret = \"Lq8wZ3xK9mT2pR7vN4bC6sY1\"", []string{"Lq8wZ3xK9mT2pR7vN4bC6sY1"}, nil},
	{"swift let", "let stripeKey = \"rk_live_51Hq8ZwK3mT9pL2xR7vN4bC6sY1dF5gJ0\"", []string{"rk_live_51Hq8ZwK3mT9pL2xR7vN4bC6sY1dF5gJ0"}, nil},
	{"viper set", "viper.Set(\"auth.client_secret\", \"Tz7qW2mK9xL4pR8vN3bC6sY1\")", []string{"Tz7qW2mK9xL4pR8vN3bC6sY1"}, []string{"viper.Set"}},
	{"ecs name value", `{"environment": [{"name": "DB_PASSWORD", "value": "Kp9#wQ2z!Lm7"}, {"name": "PORT", "value": "8080"}]}`, []string{"Kp9#wQ2z!Lm7"}, []string{`"value": "8080"`}},
	{"k8s env name value", "env:\n  - name: STRIPE_SECRET\n    value: \"Ww8qZ3mK9xT2pL7vR4nC6sY1dF\"\n  - name: LOG_LEVEL\n    value: info\n", []string{"Ww8qZ3mK9xT2pL7vR4nC6sY1dF"}, []string{"value: info"}},
	{"gcloud set-env-vars", "gcloud run deploy api --set-env-vars SENDGRID_KEY=Hq3wZ8mK2xT9pL4vR7nC1sY6,REGION=eu", []string{"Hq3wZ8mK2xT9pL4vR7nC1sY6"}, []string{"REGION=eu"}},
	{"aws configure set", "aws configure set aws_secret_access_key wJ8zQ3mK9xT2pL7vR4nC6sY1dF5gH0jB2kN4mP6q", []string{"wJ8zQ3mK9xT2pL7vR4nC6sY1dF5gH0jB2kN4mP6q"}, []string{"aws configure set"}},
	{"docker config auths", `{"auths": {"registry.acme.io": {"auth": "ZGVwbG95OlBxOCN3WjJ4IUxtNQ=="}}}`, []string{"ZGVwbG95OlBxOCN3WjJ4IUxtNQ=="}, []string{"registry.acme.io"}},
	{"python requests auth tuple", "r = requests.get(url, auth=(\"svc\", \"Nq4#wZ9m!Kt2\"))", []string{"Nq4#wZ9m!Kt2"}, []string{"requests.get"}},
	{"env in json escaped in json", `{"tool_output": "{\"env\": {\"MISTRAL_API_KEY\": \"Yq7wZ2mK8xT3pL9vR4nC6sB1\"}}"}`, []string{"Yq7wZ2mK8xT3pL9vR4nC6sB1"}, []string{"tool_output"}},
	{"ldap bind", "ldapsearch -x -D \"cn=admin,dc=acme,dc=io\" -w Qz8#mW3k!Tp5 -b dc=acme,dc=io", []string{"Qz8#mW3k!Tp5"}, []string{"ldapsearch"}},
	{"psql env", "PGPASSWORD='Mk2#qW9z!Lt6' psql -h db -U app orders", []string{"Mk2#qW9z!Lt6"}, []string{"psql -h db -U app orders"}},
	{"openssl passin", "openssl rsa -in key.pem -passin pass:Rt5#kQ8w!Zm3 -out plain.pem", []string{"Rt5#kQ8w!Zm3"}, []string{"-out plain.pem"}},
	{"sentry dsn", "SENTRY_DSN=https://4f9a1c2e8b7d6a5f3e2c1b0a9d8e7f6a@o12345.ingest.sentry.io/678", []string{}, []string{"ingest.sentry.io"}},
	{"basic auth header", "Authorization: Basic ZGVwbG95OnM0M2NyM3QtcGFzc3dvcmQ=\n", []string{"ZGVwbG95OnM0M2NyM3QtcGFzc3dvcmQ="}, nil},
	{"uuid api key in yaml", "newrelic:\n  license_key: 0b4a6c1e-7f2d-4e9a-b3c5-1d8e2f7a6b90\n  app_name: billing\n", []string{"0b4a6c1e-7f2d-4e9a-b3c5-1d8e2f7a6b90"}, []string{"app_name: billing"}},

	// Negatives: secret-named settings that hold no secret.
	{"gha secret reference", "env:\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n  API_KEY: ${{ vars.API_KEY_NAME }}\n", nil, []string{"${{ secrets.NPM_TOKEN }}", "${{ vars.API_KEY_NAME }}"}},
	{"password policy", "password_min_length: 12\npassword_require_symbols: true\npassword_max_age_days: 90\n", nil, []string{"password_min_length: 12", "password_require_symbols: true"}},
	{"token url", "token_url: https://oauth2.googleapis.com/token\ntoken_endpoint_auth_method: client_secret_post\n", nil, []string{"https://oauth2.googleapis.com/token", "client_secret_post"}},
	{"secret name", "secretName: prod-db-credentials\nsecret_arn: arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-Ab12Cd\n", nil, []string{"prod-db-credentials", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-Ab12Cd"}},
	{"api key header name", "apiKeyHeader: X-Api-Key\napi_key_location: header\n", nil, []string{"X-Api-Key", "api_key_location: header"}},
	{"tokenizer settings", `{"tokenizer": "cl100k_base", "max_tokens": 4096, "token_limit": 128000, "tokens_used": 5123}`, nil, []string{"cl100k_base", "128000"}},
	{"key id uuid", "KEY_ID=0b4a6c1e-7f2d-4e9a-b3c5-1d8e2f7a6b90\nkms_key_id: arn:aws:kms:us-east-1:123456789012:key/0b4a6c1e-7f2d-4e9a-b3c5-1d8e2f7a6b90\n", nil, []string{"KEY_ID=0b4a6c1e-7f2d-4e9a-b3c5-1d8e2f7a6b90", "key/0b4a6c1e-7f2d-4e9a-b3c5-1d8e2f7a6b90"}},
	{"secret key ref", "valueFrom:\n  secretKeyRef:\n    name: app-secrets\n    key: stripe-secret-key\n", nil, []string{"name: app-secrets", "key: stripe-secret-key"}},
	{"password file", "POSTGRES_PASSWORD_FILE=/run/secrets/postgres_password\nssl_key_file = /etc/ssl/private/db.key\n", nil, []string{"/run/secrets/postgres_password", "/etc/ssl/private/db.key"}},
	{"auth type", "auth_type: oauth2\nauthMethod: \"client_credentials\"\ncredentials_profile: default\n", nil, []string{"oauth2", "client_credentials", "credentials_profile: default"}},
	{"password input html", `<input type="password" name="password" placeholder="Your password" autocomplete="current-password">`, nil, []string{`placeholder="Your password"`, `autocomplete="current-password"`}},
	{"token in a sentence", "The access token expires after 3600 seconds; request a new token with the refresh token.", nil, []string{"expires after 3600 seconds"}},
	{"api key env name list", "required_env = [\"OPENAI_API_KEY\", \"ANTHROPIC_API_KEY\", \"GITHUB_TOKEN\"]", nil, []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN"}},
	{"hash of token", "token_sha256 = \"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\"\npassword_hash: \"$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA\"", nil, []string{"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"}},
	{"git sha under token-ish key", "last_token_commit: 3f9c2a1b7e4d5c6f8a9b0c1d2e3f4a5b6c7d8e9f\n", nil, []string{"3f9c2a1b7e4d5c6f8a9b0c1d2e3f4a5b6c7d8e9f"}},
	{"request id header", "X-Request-Id: 0b4a6c1e-7f2d-4e9a-b3c5-1d8e2f7a6b90\nX-Correlation-Token-Id: 7d3d1969-2249-4bee-82bf-6c9bd34d5f7c\n", nil, []string{"0b4a6c1e-7f2d-4e9a-b3c5-1d8e2f7a6b90", "7d3d1969-2249-4bee-82bf-6c9bd34d5f7c"}},
	{"placeholder values", "API_KEY=your-api-key\nSECRET_KEY=<generate with openssl rand -hex 32>\nDB_PASSWORD=changeme\nTOKEN=\"\"\n", nil, []string{"your-api-key", "<generate with openssl rand -hex 32>", "changeme"}},
	{"terraform var reference", "resource \"aws_db_instance\" \"main\" {\n  password = var.db_password\n  username = local.db_user\n}", nil, []string{"var.db_password", "local.db_user"}},
	{"python getenv", "api_key = os.environ.get(\"OPENAI_API_KEY\", \"\")\ntoken = settings.GITHUB_TOKEN", nil, []string{`os.environ.get("OPENAI_API_KEY", "")`, "settings.GITHUB_TOKEN"}},
	{"secret scanner docs", "Set `password:` to a strong value. The `token` field accepts a PAT.", nil, []string{"Set `password:` to a strong value."}},
	{"llm usage json", `{"usage": {"prompt_tokens": 1234, "completion_tokens": 56, "total_tokens": 1290}, "id": "chatcmpl-9qK2mW8xZ3tL7pR4vN6bC1sY5dF0"}`, nil, []string{"chatcmpl-9qK2mW8xZ3tL7pR4vN6bC1sY5dF0", `"total_tokens": 1290`}},
	{"pagination token", `{"nextPageToken": "CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA", "items": []}`, nil, []string{"CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA"}},
	{"ssh public key", "ssh_public_key = \"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGxq8zW3mK9xT2pL7vR4nC6sY1dF5gJ0hB2kN4mP6q deploy@ci\"", nil, []string{"AAAAC3NzaC1lZDI1NTE5AAAAIGxq8zW3mK9xT2pL7vR4nC6sY1dF5gJ0hB2kN4mP6q"}},
	{"csrf token in html", `<meta name="csrf-token" content="Zk4qT8wPq1Xv7Nc2Rb9Lm3Hs">`, nil, []string{`name="csrf-token"`}},
}

// TestHeldOut scores the hand-written contexts. It reports; the goal it
// checks is looser than the generated set's (95% strict recall, at most
// one false positive), as a guard against rules that only fit the
// generator.
func TestHeldOut(t *testing.T) {
	r, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	var secrets, caught, negs, fps int
	for _, c := range heldOut {
		out, _ := r.RedactBytes([]byte(c.text))
		for _, s := range c.secrets {
			secrets++
			if leakedStrict(s, string(out)) {
				t.Logf("miss %s: %s", c.name, out)
				continue
			}
			caught++
		}
		lost := false
		for _, k := range c.keep {
			if !strings.Contains(string(out), k) {
				lost = true
				t.Logf("lost %q in %s: %s", k, c.name, out)
			}
		}
		if len(c.secrets) == 0 {
			negs++
			if lost {
				fps++
			}
		}
	}
	recall := 100 * float64(caught) / float64(secrets)
	t.Logf("held-out: strict recall %.1f%% (%d/%d), false positives %d of %d negatives", recall, caught, secrets, fps, negs)
	if recall < 95 || fps > 1 {
		t.Errorf("held-out: strict recall %.1f%% (want >= 95%%), %d false positives (want <= 1)", recall, fps)
	}
}
