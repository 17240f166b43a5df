/** The English strings of the publication controls (registered with their German counterpart by publication-controls.tsx). */
export const publicationStrings = {
  publication: {
    label: 'Publication',
    draft: 'Draft',
    pending: 'Review pending',
    pendingSince: 'Submitted for review by {{who}}; a publisher approves or returns it.',
    returned: 'Returned by {{who}}: {{note}}',
    submit: 'Submit for review',
    submitTitle: 'Submit “{{name}}” for review?',
    submitMessage: 'A publisher approves it (it goes live) or returns it to you with a note. You can still change the draft, but a change after submitting means submitting again.',
    note: 'Note for the publisher (optional)',
    reviews: 'Open reviews',
    publish: 'Publish',
    pause: 'Pause',
    resume: 'Resume',
    unpublish: 'Unpublish',
    end: 'End',
    confirmTitle: '{{action}} “{{name}}”?',
    confirm: {
      publish: 'It goes live for participants now.',
      pause: 'It stops applying until it is resumed.',
      resume: 'It applies again from now on.',
      unpublish: 'It is taken off its site; its activities stop.',
      end: 'It ends now; participants can no longer progress.',
    },
    readOnly: 'Only a publisher can change what is live.',
  },
};
