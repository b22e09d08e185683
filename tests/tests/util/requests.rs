//! Requests the window and the served page are both tested with: the same questions on
//! either surface.

/// Every kind of question, interactive dialect.
pub const RELEASE: &str = r#"{"inbox": 1, "title": "Release checklist 2.4",
  "source": {"app": "planu", "run": "run-81"},
  "questions": [
    {"id": "ship", "question": "Ship 2.4 today?", "type": "confirm"},
    {"id": "env", "question": "Which environment first?", "type": "choice",
     "options": ["staging", "production"], "allow_custom": true},
    {"id": "tags", "question": "Tag the release with?", "type": "multiChoice",
     "options": ["payments", "frontend", "urgent"]},
    {"id": "ticket", "question": "Tracking ticket?", "type": "text",
     "pattern": "^[A-Z]+-[0-9]+$"}
  ]}"#;

/// Every kind of question, structured dialect (ids q1..q4; fill-in on by default).
pub const STORAGE: &str = r#"{"inbox": 1, "title": "Configure the storage layer",
  "source": {"app": "crush", "run": "session-91c2", "tool": "question"},
  "questions": [
    {"label": "Database", "type": "single_choice", "question": "Which database?",
     "description": "PostgreSQL for relational data, MongoDB for documents.",
     "choices": [{"id": "pg", "label": "PostgreSQL"}, {"id": "mongo", "label": "MongoDB"}]},
    {"label": "Caching", "type": "yes_no", "question": "Enable caching?"},
    {"label": "Extras", "type": "multi_choice", "question": "Which extras?", "allow_custom": false,
     "choices": [{"id": "read", "label": "Read replicas"},
                 {"id": "backup", "label": "Nightly backups", "description": "Kept 30 days"},
                 {"id": "pitr", "label": "Point-in-time recovery"}]},
    {"label": "Concerns", "type": "free_text", "question": "Any concerns about this approach?"}
  ],
  "confirm_title": "Ready to configure?",
  "confirm_description": "The agent will write the chosen setup to `compose.yaml`."}"#;

pub const MIGRATE: &str = r#"{"inbox": 1, "title": "Migrate the orders table",
  "source": {"app": "ops-pipeline", "run": "nightly-513"},
  "questions": [{"type": "yes_no", "question": "Run the migration on the live database?"}]}"#;
